"""A chart page asks for its chart libraries and compiled charts as it starts, not once charts.js runs.

charts.js runs at the end of the body, after Material's own script, and only then starts the requests for
Vega, vega-embed, the compiled set's expressions and the compiled charts (its loadEarly): on a machine's
page, long after the page arrived, and they were still arriving and compiling when the page was ready to
draw. Named in the page's head as preloads, the same requests leave as soon as the browser
reads the head, and the scripts are compiled while the page starts. Which compiled variant a page needs
depends on the palette the reader chose and the window's width, known only in the browser: a small script
at the end of the head asks for the variant charts.js will ask for first (compiledVariant, layoutFor).
Every request is the one charts.js makes, so the browser uses each preloaded response and warns of none
unused (tests/browser/test_site_browser.py). On a machine's page the charts are drawn sooner
(docs/PERFORMANCE.md).

It runs on every page MkDocs writes (hooks.py, on_post_page) and on every machine page stamped into the shell
(build.py).
"""

from __future__ import annotations

import json
import re

from connlab.site.charts.constants import COMPILED_SET_ATTRIBUTE, NARROW_WIDTH
from connlab.site.charts.expressions import expressions_asset_name
from connlab.site.charts.html import FIGURE_START
from connlab.site.charts.vendor import vendored_path
from connlab.site.layout import COMPILED_CHARTS_SUBDIR

# charts.js in the site (mkdocs.yml: extra_javascript), and where the page's script tag for it points.
CHARTS_SCRIPT = "assets/charts.js"
_CHARTS_SCRIPT_TAG = re.compile(r'<script src="([^"]*)' + re.escape(CHARTS_SCRIPT) + '"')
ASSETS_DIR = CHARTS_SCRIPT.rsplit("/", 1)[0]
_FIGURE = re.compile(re.escape(FIGURE_START) + r"\b[^>]*>")
_COMPILED_SET = re.compile(rf'\b{COMPILED_SET_ATTRIBUTE}="([^"]+)"')
# The palette a page is served with (Material writes the first palette's scheme on the body).
_SERVED_SCHEME = re.compile(r'<body\b[^>]*\bdata-md-color-scheme="([^"]*)"')
HEAD_END = "</head>"


def with_chart_preloads(html: str, **_: object) -> str:
    """The page with its chart requests started from its head (MkDocs' post_page event); a page without a
    chart, or whose charts.js is not found, as it was."""
    figures = _FIGURE.findall(html)
    script = _CHARTS_SCRIPT_TAG.search(html)
    if not figures or script is None or HEAD_END not in html:
        return html
    root = script.group(1)  # the site's root, relative to the page
    named = [found.group(1) if (found := _COMPILED_SET.search(figure)) else None for figure in figures]
    sets = sorted({name for name in named if name is not None})
    # vega-lite only where a figure is drawn from its Vega-Lite spec (charts.js: needVegaLite).
    from_vega_lite = None in named
    packages = ["vega", *(["vega-lite"] if from_vega_lite else []), "vega-embed"]
    scripts = [f"{root}{ASSETS_DIR}/{vendored_path(package)}" for package in packages]
    scripts += [f"{root}{COMPILED_CHARTS_SUBDIR}/{expressions_asset_name(name)}" for name in sets]
    head = "".join(f'<link rel="preload" as="script" href="{src}">' for src in scripts)
    served = _SERVED_SCHEME.search(html)
    if sets and served:
        head += _variant_script(f"{root}{COMPILED_CHARTS_SUBDIR}/", sets, served.group(1))
    return html.replace(HEAD_END, f"{head}\n{HEAD_END}", 1)


def _variant_script(folder: str, sets: list[str], served: str) -> str:
    """Preloads of the compiled variant charts.js fetches first, for each set (its loadEarly): the layout a
    column as wide as the window would take, in the palette the page will be drawn with. That palette is
    the one the reader chose, as Material keeps it (its __md_get, defined above in the head, and read again
    by its own script at the top of the body), else the one the page is served with. A palette that
    follows the system's (Material resolves it from a media query) gets no preload: charts.js asks for it."""
    return (
        "<script>(function(){var p=typeof __md_get==='function'&&__md_get('__palette'),c=p&&p.color;"
        "if(c&&c.media==='(prefers-color-scheme)')return;"
        f"var s=c&&c.scheme||{json.dumps(served)},w=window.innerWidth,"
        f"v=(w>0&&w<{NARROW_WIDTH}?'narrow':'wide')+'-'+(s==='slate'?'dark':'light');"
        f"{json.dumps(sets)}.forEach(function(n){{var l=document.createElement('link');"
        "l.rel='preload';l.as='fetch';l.crossOrigin='anonymous';"
        f"l.href={json.dumps(folder)}+n+'.'+v+'.json';document.head.appendChild(l)}})}})()</script>"
    )
