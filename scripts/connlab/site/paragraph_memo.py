"""A paragraph of plain prose converted once per process, however many pages repeat it: the same HTML.

Every machine's page repeats the articles' explanations of their tables, some 60 paragraphs and 20 KB of
its Markdown, and Python-Markdown converted them again on each of a thousand pages: a quarter of a machine
page's conversion. A paragraph's HTML depends on its own text alone when nothing in it can reach outside it
(no link or reference, no inline HTML, no attribute list, no placeholder) and nothing around it can take it
in (it stands at the top of the page, after every raw HTML block has been kept aside). Such a paragraph is
converted as usual the first time, marked with an attribute that a last step reads its HTML from and takes
off again; wherever the same text comes again, its HTML is kept aside in its place, as a raw HTML block is.

Named in mkdocs.yml after the Markdown extensions it relies on; tests/test_paragraph_memo.py compares every
page of the site with and without it.
"""

from __future__ import annotations

import re

from markdown import Markdown
from markdown.extensions import Extension
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor
from markdown.util import ETX, STX

# After every preprocessor that keeps raw HTML or code aside (html_block is 20): what is left of the page is
# Markdown blocks and placeholders.
PREPROCESSOR_PRIORITY = 15
# After every other postprocessor (amp_substitute 20, raw_html 30): the paragraph's HTML as the page has it.
POSTPROCESSOR_PRIORITY = 1
MARKER = "data-connlab-memo"
MARKED = re.compile(rf'<p {MARKER}="([0-9]+)">(.*?)</p>', re.DOTALL)
# Anything that could make a paragraph's HTML depend on the page (links and references, inline HTML, an
# attribute list, a table, a placeholder), or is not yet Markdown's final word on it.
REACHES_OUT = re.compile(rf"[\[\]<{{}}|{STX}{ETX}]")
# A line that a block processor reads as something besides a paragraph, wherever it stands in the block:
# a heading, quote, list item, rule, setext underline, admonition, details, tab, definition, indented code.
NOT_PROSE_LINE = re.compile(
    r"^(?: {0,3}(?:[#>:]|[*+-][ ]|[0-9]+[.)][ ]|!!!|\?\?\?|===)| {0,3}[-_*=][-_*= ]*$|\s{4})"
)
# Extensions whose state spans the page (an abbreviation or footnote defined anywhere applies everywhere):
# with any of them, nothing is kept.
PAGE_WIDE = ("abbr", "footnote")
# More distinct paragraphs than this are not kept (a page's own figures make most paragraphs distinct).
MAX_KEPT = 20_000

_kept: dict[tuple[str, str], str] = {}


def _setup(md: Markdown) -> str:
    """What a paragraph's HTML depends on besides its text: the inline patterns, tree- and postprocessors
    (each name, kind and priority) and the output format, as one text."""
    parts = [md.output_format, "".join(md.ESCAPED_CHARS)]
    for registry in (md.inlinePatterns, md.treeprocessors, md.postprocessors):
        for item in registry._priority:
            parts.append(f"{item.name}:{item.priority}:{type(registry[item.name]).__qualname__}")
    return "\n".join(parts)


def is_plain_paragraph(lines: list[str]) -> bool:
    """Whether a block (consecutive non-empty lines) is a paragraph whose HTML depends on its text alone."""
    return (
        not lines[0][:1].isspace()
        and lines[-1] == lines[-1].rstrip()  # trailing spaces before the marker would make a line break
        and not any(NOT_PROSE_LINE.match(line) or REACHES_OUT.search(line) for line in lines)
    )


class ParagraphMemoPreprocessor(Preprocessor):
    """Each plain paragraph seen before replaced by its HTML kept aside; each not seen yet marked."""

    def __init__(self, md: Markdown) -> None:
        super().__init__(md)
        self.marked: list[str] = []  # this conversion's marked paragraphs, by their number in the marker
        self.setup: str | None = None

    def run(self, lines: list[str]) -> list[str]:
        self.marked = []
        if any(name in self.md.treeprocessors or name in self.md.inlinePatterns for name in PAGE_WIDE):
            return lines
        if "attr_list" not in self.md.treeprocessors:  # which reads the marker
            return lines
        if self.setup is None:
            self.setup = _setup(self.md)
        out: list[str] = []
        start = 0
        while start < len(lines):
            if lines[start] == "":
                out.append("")
                start += 1
                continue
            end = start
            while end < len(lines) and lines[end] != "":
                end += 1
            block = lines[start:end]
            out += self._paragraph(block) if is_plain_paragraph(block) else block
            start = end
        return out

    def _paragraph(self, block: list[str]) -> list[str]:
        html = _kept.get((self.setup or "", "\n".join(block)))
        if html is not None:
            return [self.md.htmlStash.store(html)]
        if len(_kept) >= MAX_KEPT:
            return block
        self.marked.append("\n".join(block))
        return [*block, f'{{: {MARKER}="{len(self.marked) - 1}" }}']


class ParagraphMemoPostprocessor(Postprocessor):
    """Each marked paragraph's HTML kept for the pages to come, and its marker taken off this page."""

    def __init__(self, md: Markdown, preprocessor: ParagraphMemoPreprocessor) -> None:
        super().__init__(md)
        self.preprocessor = preprocessor

    def run(self, text: str) -> str:
        if not self.preprocessor.marked:
            return text

        def unmarked(match: re.Match[str]) -> str:
            html = f"<p>{match.group(2)}</p>"
            key = (self.preprocessor.setup or "", self.preprocessor.marked[int(match.group(1))])
            _kept[key] = html
            return html

        return MARKED.sub(unmarked, text)


class ParagraphMemoExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        md.registerExtension(self)
        preprocessor = ParagraphMemoPreprocessor(md)
        md.preprocessors.register(preprocessor, "connlab_paragraph_memo", PREPROCESSOR_PRIORITY)
        md.postprocessors.register(
            ParagraphMemoPostprocessor(md, preprocessor), "connlab_paragraph_memo", POSTPROCESSOR_PRIORITY
        )


def makeExtension(**kwargs: object) -> ParagraphMemoExtension:
    return ParagraphMemoExtension(**kwargs)
