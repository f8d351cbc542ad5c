"""connlab.site.publish.preloads: a chart page names the requests charts.js will make in its head, and
nothing else changes; tests/browser/test_site_browser.py checks in the browser that charts.js uses each of
them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connlab.site.publish.preloads import with_chart_preloads

SET = "0123abcd"
PAGE = """<html><head><title>A machine</title>
<script>__md_get=()=>null</script>
</head>
<body dir="ltr" data-md-color-scheme="default" data-md-color-primary="indigo">
<header>...</header>
<article>{figures}</article>
<script src="../../assets/javascripts/bundle.js"></script>
<script src="../../assets/charts.js"></script>
</body></html>
"""
COMPILED = (
    '<figure class="connlab-chart connlab-chart--browser-only" id="chart-a" '
    f'data-vega-set="{SET}" data-vega-kind="k">'
)
FROM_VEGA_LITE = '<figure class="connlab-chart" id="chart-b">'
PRELOAD = re.compile(r'<link rel="preload" as="script" href="([^"]+)">')


def head(html: str) -> str:
    return html.split("</head>", 1)[0]


def test_a_compiled_chart_page_preloads_the_libraries_its_expressions_and_its_variant() -> None:
    page = PAGE.format(figures=COMPILED + "</figure>")
    html = with_chart_preloads(page)
    assert PRELOAD.findall(head(html)) == [
        "../../assets/vendor/vega.min.js",
        "../../assets/vendor/vega-embed.min.js",
        f"../../assets/vega/{SET}.expressions.js",
    ]
    # The variant is chosen in the browser, after Material's __md_get is defined, from the palette the page
    # is served with where the reader chose none.
    script = head(html).rsplit("<script>", 1)[1]
    assert f'["{SET}"]' in script and '"../../assets/vega/"' in script and '||"default"' in script
    assert html.replace(head(html), "") == page.replace(head(page), ""), "the body changed"


def test_vega_lite_is_preloaded_only_where_a_chart_is_drawn_from_its_vega_lite_spec() -> None:
    compiled = PRELOAD.findall(with_chart_preloads(PAGE.format(figures=COMPILED + "</figure>")))
    assert not any("vega-lite" in src for src in compiled)
    both = with_chart_preloads(PAGE.format(figures=COMPILED + "</figure>" + FROM_VEGA_LITE + "</figure>"))
    assert "../../assets/vendor/vega-lite.min.js" in PRELOAD.findall(both)
    alone = with_chart_preloads(PAGE.format(figures=FROM_VEGA_LITE + "</figure>"))
    assert 'as="fetch"' not in alone and "__md_get('__palette')" not in alone, "no compiled set to ask for"


@pytest.mark.parametrize(
    "page",
    [
        PAGE.format(figures="<p>No chart here.</p>"),
        PAGE.format(figures=COMPILED).replace("charts.js", "other.js"),
    ],
    ids=["no chart", "no charts.js"],
)
def test_a_page_without_a_chart_or_without_charts_js_is_left_as_it_is(page: str) -> None:
    assert with_chart_preloads(page) == page


def test_every_file_a_built_page_preloads_is_in_the_site(built_site: Path) -> None:
    pages = [page for page in sorted(built_site.rglob("*.html")) if "connlab-chart__spec" in page.read_text()]
    assert pages, f"no page with a chart in {built_site}"
    for page in pages:
        html = page.read_text(encoding="utf-8")
        sources = PRELOAD.findall(head(html))
        assert sources, f"{page} has charts and preloads none"
        for src in sources:
            assert (page.parent / src).resolve().is_file(), f"{page} preloads {src}, which is not in the site"
        folder = re.search(r'l\.href="([^"]+)"', html)
        assert folder and (page.parent / folder.group(1)).resolve().is_dir(), page
