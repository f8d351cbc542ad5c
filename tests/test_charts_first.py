"""connlab.site.charts_first: on a chart page every script Material's template writes after its configuration,
but charts.js, is written inert and preloaded, and a script before them runs them once the charts are drawn;
tests/test_site_browser.py checks the order in the browser, and that Material starts without charts.js."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connlab.paths import ASSETS_SRC_DIR
from connlab.site.charts_first import (
    AFTER_CHARTS_TYPE,
    CHARTS_DRAWN_EVENT,
    FALLBACK_MS,
    with_scripts_after_charts,
)

PAGE = """<html><head><title>A machine</title>
</head>
<body>
<article>{content}</article>
<script id="__config" type="application/json">{{"base": "../.."}}</script>
<script src="../../assets/javascripts/bundle.0123.min.js"></script>
<script src="../../assets/charts.js"></script>
<script src="../../assets/picker.js"></script>
</body></html>
"""
FIGURE = '<figure class="connlab-chart" id="chart-a"></figure>'
LATER = ["../../assets/javascripts/bundle.0123.min.js", "../../assets/picker.js"]
SCRIPT_TAG = re.compile(r'<script(?: type="([^"]+)")? src="([^"]+)"></script>')


def test_every_script_but_charts_js_waits_in_its_place_and_is_preloaded() -> None:
    html = with_scripts_after_charts(PAGE.format(content=FIGURE))
    body = html.split("</head>", 1)[1]
    assert SCRIPT_TAG.findall(body) == [
        (AFTER_CHARTS_TYPE, LATER[0]),
        ("", "../../assets/charts.js"),
        (AFTER_CHARTS_TYPE, LATER[1]),
    ]
    head = html.split("</head>", 1)[0]
    assert re.findall(r'<link rel="preload" as="script" href="([^"]+)">', head) == LATER
    # The script that runs them comes before the first, and listens for charts.js's event and the fallback.
    runner = body.split("<script>", 1)[1].split("</script>", 1)[0]
    assert body.index("<script>") < body.index(LATER[0])
    assert CHARTS_DRAWN_EVENT in runner and f"setTimeout(start,{FALLBACK_MS})" in runner
    assert "new Event('DOMContentLoaded'" in runner
    # Nothing else changed.
    restored = re.sub(r'<link rel="preload" as="script" href="[^"]+">\n?', "", html)
    restored = restored.replace(f'type="{AFTER_CHARTS_TYPE}" ', "")
    restored = restored.replace(f"<script>{runner}</script>\n", "")
    assert restored == PAGE.format(content=FIGURE)


@pytest.mark.parametrize(
    "page",
    [
        PAGE.format(content="<p>No chart here.</p>"),
        PAGE.format(content=FIGURE).replace("charts.js", "other.js"),
        PAGE.format(content=FIGURE).replace('<script id="__config"', '<script id="elsewhere"'),
    ],
    ids=["no chart", "no charts.js", "no Material configuration"],
)
def test_a_page_without_a_chart_charts_js_or_material_scripts_is_left_as_it_is(page: str) -> None:
    assert with_scripts_after_charts(page) == page


def test_every_built_chart_page_runs_materials_script_after_its_charts(built_site: Path) -> None:
    pages = [page for page in sorted(built_site.rglob("*.html")) if "connlab-chart__spec" in page.read_text()]
    assert pages, f"no page with a chart in {built_site}"
    for page in pages:
        scripts = SCRIPT_TAG.findall(page.read_text(encoding="utf-8"))
        waiting = [src for kind, src in scripts if kind == AFTER_CHARTS_TYPE]
        assert any("/javascripts/bundle." in src for src in waiting), page
        live = [src for kind, src in scripts if not kind]
        assert len(live) == 1 and live[0].endswith("assets/charts.js"), (page, live)
        for src in waiting:
            assert (page.parent / src).resolve().is_file(), f"{page} waits for {src}: not in the site"


def test_charts_js_fires_the_event_the_page_waits_for() -> None:
    """Under another name the page's scripts would wait for the fallback instead of the charts."""
    charts_js = (ASSETS_SRC_DIR / "charts.js").read_text(encoding="utf-8")
    assert f'var CHARTS_DRAWN = "{CHARTS_DRAWN_EVENT}";' in charts_js
    assert "document.dispatchEvent(new Event(CHARTS_DRAWN))" in charts_js
