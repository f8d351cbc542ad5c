"""connlab.site.chart_blocks keeps the chart blocks aside before Python-Markdown reads a page: every page of
the site rendered from the committed results converts to the same HTML as without it."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest
from mkdocs.structure.pages import _RawHTMLPreprocessor

from conftest import site_config
from connlab.site.chart_html import FIGURE_START, chart_block

CHART_BLOCKS = "connlab.site.chart_blocks"


def _converters() -> tuple[markdown.Markdown, markdown.Markdown]:
    """Python-Markdown as MkDocs runs it for the site (its anchor collector included), with and without."""
    config = site_config()
    extensions = list(config.markdown_extensions)
    assert CHART_BLOCKS in extensions, "mkdocs.yml must name the chart blocks extension"
    made = []
    for names in (extensions, [name for name in extensions if name != CHART_BLOCKS]):
        converter = markdown.Markdown(extensions=names, extension_configs=config.mdx_configs)
        _RawHTMLPreprocessor()._register(converter)
        made.append(converter)
    return made[0], made[1]


def test_every_page_converts_as_without_it(docs_from_fixtures: Path) -> None:
    docs = docs_from_fixtures
    kept_aside, read_through = _converters()
    charts = 0
    for path in sorted(docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        html = kept_aside.reset().convert(text)
        assert html == read_through.reset().convert(text), path.relative_to(docs)
        charts += text.count(FIGURE_START)
    assert charts > 10


def test_the_blocks_never_reach_the_other_preprocessors(docs_from_fixtures: Path) -> None:
    docs = docs_from_fixtures
    """MkDocs' anchor collector (which parses the whole page as HTML) no longer sees the charts' ids."""
    page = next(
        path for path in sorted(docs.rglob("*.md")) if FIGURE_START in path.read_text(encoding="utf-8")
    )
    text = page.read_text(encoding="utf-8")
    seen = []
    for converter in _converters():
        converter.reset().convert(text)
        anchors = converter.preprocessors["mkdocs_raw_html"].present_anchor_ids
        seen.append({anchor for anchor in anchors if anchor.startswith("chart-")})
    assert seen[0] == set()
    assert len(seen[1]) >= text.count(FIGURE_START)


def test_an_unclosed_figure_is_left_to_python_markdown() -> None:
    kept_aside, read_through = _converters()
    text = f'before\n\n{FIGURE_START}" id="chart-x">\n<div></div>\n\nafter\n'
    assert kept_aside.reset().convert(text) == read_through.reset().convert(text)


@pytest.mark.parametrize(
    "place", ["{}", "Before.\n\n{}\n\nAfter.", "- an item\n\n{}", "```\n{}\n```", "~~~html\n{}\n~~~"]
)
def test_a_chart_block_converts_as_without_it_where_the_templates_put_it(place: str) -> None:
    """At the top level, in a list, and as code in a fence (left there as code)."""
    kept_aside, read_through = _converters()
    block = chart_block(
        {"mark": "point", "data": {"values": [{"x": 1}]}}, "demo", "Caption.", "Alt.", None, []
    )
    text = place.format(block)
    assert kept_aside.reset().convert(text) == read_through.reset().convert(text)


def test_no_page_links_to_a_chart_by_its_id(docs_from_fixtures: Path) -> None:
    docs = docs_from_fixtures
    """The charts' ids are not among the anchors MkDocs checks links against: a link to one would pass
    unchecked."""
    for path in docs.rglob("*.md"):
        assert not re.search(r"#chart-", re.sub(r'id="chart-[^"]*"', "", path.read_text(encoding="utf-8"))), (
            path
        )
