"""The site's chart blocks (and machine pickers) kept aside before Python-Markdown reads a page: the same
HTML, less reading.

A chart block (connlab.site.chart_html) is raw HTML, a `<figure class="connlab-chart ...">` whose `<script>`
holds the chart's spec: two thirds of a machine page's Markdown. Python-Markdown's preprocessors each read
the whole page (superfences looking for fences, MkDocs collecting anchor ids with an HTML parser, md_in_html
parsing every raw HTML block), and the specs were most of what they read. Each block is now stored as raw
HTML at once, as md_in_html stores a block of HTML, and the page goes on with its placeholder.

The figure's ids (the chart's, its caption's, its description's) are therefore not among the anchors MkDocs
collects to check links against; no page links to a chart by its id. Named in mkdocs.yml;
tests/test_chart_blocks.py compares every page of the site with the pages converted without it.

The templates write chart blocks at the top level of a page, where the HTML is the same byte for byte (and
in a list). A block inside an HTML element is kept as written: md_in_html would have serialised a
`markdown` element's figure again (attributes reordered) and kept blank lines in a raw one differently.
"""

from __future__ import annotations

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

from connlab.site.chart_html import FIGURE_START

FIGURE_END = "</figure>"
# After normalize_whitespace (30), which removes the characters a placeholder is made of, and after
# superfences keeps fenced code aside (25): a figure's text inside a fence stays code. Before the HTML
# parsers that read the whole page (MkDocs' anchors 21, md_in_html 20).
PRIORITY = 24


# The machine picker (site_src/partials/_machine_picker.md.j2): an option per machine, which md_in_html
# parsed tag by tag on every article.
PICKER_START = '<nav class="connlab-picker"'
PICKER_END = "</nav>"
# Each kind of block kept aside: the line it starts with, and its last line.
KEPT_BLOCKS = {FIGURE_START: FIGURE_END, PICKER_START: PICKER_END}


class ChartBlockPreprocessor(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        kept: list[str] = []
        block: list[str] | None = None
        end = ""
        for line in lines:
            if block is None:
                start = next((start for start in KEPT_BLOCKS if line.startswith(start)), None)
                if start is not None:
                    block, end = [], KEPT_BLOCKS[start]
            if block is None:
                kept.append(line)
                continue
            block.append(line)
            if line == end:
                # With the line end md_in_html keeps after a block, so the page's HTML is the same.
                kept += ["", self.md.htmlStash.store("\n".join(block) + "\n"), ""]
                block = None
        return kept + (block or [])  # a block left open goes to Python-Markdown as it is


class ChartBlockExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(ChartBlockPreprocessor(md), "connlab_chart_blocks", PRIORITY)


def makeExtension(**kwargs: object) -> ChartBlockExtension:
    return ChartBlockExtension(**kwargs)
