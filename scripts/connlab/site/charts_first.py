"""On a page with a chart, the charts are drawn before Material's script and the project's other scripts run.

Material's template ends the body with its bundle, then the scripts mkdocs.yml lists (charts.js, picker.js,
accessibility.js), each run by the browser as it reaches it. On a machine's page Material's bundle took
about 160 ms to run and its start, once the page was parsed, about 130 ms more; charts.js could only start
drawing after both, on a main thread that is busy from the page's arrival until its last chart is drawn.

Here every script of that list but charts.js is written inert (a type the browser neither fetches nor runs)
and named as a preload in the head, so that it is fetched at once. A small script before them makes them
live, in their order, once charts.js says the page's charts are drawn (its CHARTS_DRAWN event), or
FALLBACK_MS after the document was parsed whatever happens to charts.js. Material starts its page on
DOMContentLoaded, which has fired by then: the script fires it again once the last of them has run, and marks
the page (SCRIPTS_STATE) for whoever waits for Material (the browser tests). Material's scripts then see the
page they would have seen, with its charts drawn; a reader who opens search or switches palette in the first
second waits for them.

MkDocs calls `with_scripts_after_charts` on every page it writes (publish.py).
"""

from __future__ import annotations

import re

from connlab.site.chart_html import FIGURE_START
from connlab.site.preloads import CHARTS_SCRIPT, HEAD_END

# The type an inert script is written with; the script that makes them live looks for it.
AFTER_CHARTS_TYPE = "connlab/after-charts"
# What charts.js fires on the document once a page's first drawing is over, drawn or failed (charts.js:
# CHARTS_DRAWN).
CHARTS_DRAWN_EVENT = "connlab:charts-drawn"
# On <html>: PENDING while the scripts wait, RAN once they have run and Material has started the page.
SCRIPTS_STATE = "data-connlab-scripts"
PENDING = "pending"
RAN = "ran"
# How long after the document is parsed the scripts run whether or not charts.js said anything: a charts.js
# that failed to load or threw must not leave the page without Material's search, palette and navigation.
FALLBACK_MS = 4000
# Material's configuration, written just before its scripts: the scripts after it are the template's.
CONFIG_SCRIPT = '<script id="__config"'
_SCRIPT_TAG = re.compile(r'<script src="([^"]+)"></script>')
BODY_END = "</body>"


def with_scripts_after_charts(html: str, **_: object) -> str:
    """The page with every script after Material's configuration but charts.js made inert and preloaded,
    and the script that runs them once the charts are drawn (MkDocs' post_page event). A page without a
    chart or without those scripts is returned as it was."""
    config = html.find(CONFIG_SCRIPT)
    end = html.rfind(BODY_END)
    if FIGURE_START not in html or config < 0 or end < config or HEAD_END not in html:
        return html
    tail = html[config:end]
    sources = _SCRIPT_TAG.findall(tail)
    later = [src for src in sources if not src.endswith(CHARTS_SCRIPT)]
    first = _SCRIPT_TAG.search(tail)
    if first is None or not later or len(later) == len(sources):
        return html  # no charts.js to wait for, or nothing to wait for it

    def inert(found: re.Match[str]) -> str:
        src = found.group(1)
        if src.endswith(CHARTS_SCRIPT):
            return found.group(0)
        return f'<script type="{AFTER_CHARTS_TYPE}" src="{src}"></script>'

    tail = tail[: first.start()] + _RUNNER + _SCRIPT_TAG.sub(inert, tail[first.start() :])
    preloads = "".join(f'<link rel="preload" as="script" href="{src}">' for src in later)
    head, rest = html[:config].split(HEAD_END, 1)
    return f"{head}{preloads}\n{HEAD_END}{rest}{tail}{html[end:]}"


# Runs the inert scripts in their order (a script added by a script runs when it arrives, unless it is told
# not to be async), each where it was written; after the frame that shows the charts, which Material's script
# would otherwise hold back. The page's preloads have been taken by then (these scripts' as they are added)
# and are removed: Material's instant navigation sets every relative address in the page again as it
# starts, which asks for a preload taken already a second time.
_RUNNER = (
    "<script>(function(){var root=document.documentElement,started=false;"
    f"root.setAttribute('{SCRIPTS_STATE}','{PENDING}');"
    "function start(){if(started)return;started=true;"
    f"var inert=document.querySelectorAll('script[type=\"{AFTER_CHARTS_TYPE}\"]'),left=inert.length;"
    "function ran(){if(--left>0)return;"
    "document.dispatchEvent(new Event('DOMContentLoaded',{bubbles:true}));"
    f"root.setAttribute('{SCRIPTS_STATE}','{RAN}')}}"
    "inert.forEach(function(tag){var live=document.createElement('script');live.async=false;"
    "live.onload=live.onerror=ran;live.src=tag.getAttribute('src');tag.replaceWith(live)});"
    "document.querySelectorAll('link[rel=preload]').forEach(function(link){link.remove()})}"
    f"document.addEventListener('{CHARTS_DRAWN_EVENT}',function(){{"
    "requestAnimationFrame(function(){setTimeout(start,0)})});"
    "document.addEventListener('DOMContentLoaded',function(){setTimeout(start,"
    f"{FALLBACK_MS})}},{{once:true}})}})()</script>\n"
)
