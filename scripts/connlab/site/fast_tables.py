"""Python-Markdown's tables, converted faster where a cell holds plain text: the same HTML, byte for byte.

A machine's page holds some 280 table lines and 1,500 cells. Python-Markdown runs each cell through every
inline pattern (code, escapes, links, emphasis, HTML, entities...), which made the tables about two thirds of
the page's conversion. Most cells are numbers or words, which no pattern can change; such a cell is kept as
Markdown would write it, with its backslash escapes resolved (`select\\-only` is `select-only`), and skips
the inline patterns. A cell with anything a pattern could take (a backtick, emphasis, a link, HTML, an
entity, attributes) is converted by Python-Markdown as before. A row with no backtick is split on its pipes
directly, as Python-Markdown's own splitting comes to when no code span can hold a pipe.

A table whose every cell is plain, or plain with the verdict tables' **bold**, <br> and <small>...</small>,
goes further: its HTML is written here as one string, as Python-Markdown would serialise it, and kept aside
as raw HTML, so that none of the later tree walks (inline patterns, table of contents, attributes, line
breaks, serialising) visits its elements. A machine page converted in 45 ms instead of 80 ms.

A verdict table stands in a `<div class="verdict-table" markdown>` (for its style), which md_in_html parses
tag by tag, every cell's <br> and <small> included, before the table's own processor sees it: the three
such divs were a third of a machine page's conversion (89 ms with them, 60 ms without). A div written so,
holding one table of plain cells and nothing else, is now written here whole, as md_in_html writes it, and
kept aside before md_in_html reads the page (TableDivPreprocessor).

Named in mkdocs.yml in place of `tables`; tests/test_fast_tables.py compares every page of the site with
Python-Markdown's own tables.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from collections.abc import Sequence

from markdown import Markdown
from markdown.extensions.tables import TableExtension, TableProcessor
from markdown.preprocessors import Preprocessor
from markdown.serializers import _escape_cdata
from markdown.util import ETX, STX, AtomicString

# What an inline pattern of the configured extensions starts with: code (`), escapes (\), emphasis (* _),
# links and images ([ ] !), HTML and autolinks (< >), entities (&), attr_list's attributes ({ }), and the
# placeholders Python-Markdown itself writes (STX, ETX).
INLINE_MARKUP = re.compile(r"[`\\*_\[\]!<>&{}" + STX + ETX + "]")
BACKSLASH_ESCAPE = re.compile(r"\\(.)")
# Without backticks, Python-Markdown's splitting keeps an escaped pipe (\|, after any \\ pairs) in its cell.
ROW_PIPES = re.compile(r"(\\\\)|(\\\|)|(\|)")


class FastTableProcessor(TableProcessor):
    def run(self, parent: etree.Element, blocks: list[str]) -> None:
        html = self._plain_table_html(blocks[0].split("\n"))
        if html is None:
            super().run(parent, blocks)
            return
        blocks.pop(0)
        # The paragraph holding a raw-HTML placeholder is what Python-Markdown makes of a raw HTML block; its
        # last step swaps the paragraph for the HTML.
        etree.SubElement(parent, "p").text = self.parser.md.htmlStash.store(html)

    def _plain_table_html(self, lines: list[str]) -> str | None:
        """The table as Python-Markdown writes it (TableProcessor.run, then the line breaks its prettifier
        adds after every block element); None where a cell holds other markup (cell_html) or the table has
        no body row."""
        if len(lines) < 3:
            return None  # Python-Markdown writes a row of empty cells for a table without rows.
        escapable = self.parser.md.ESCAPED_CHARS
        written = ' align="{}"' if self.config["use_align_attribute"] else ' style="text-align: {};"'
        styles = ["" if side is None else written.format(side) for side in _alignments(self.separator)]
        parts = ["<table>\n<thead>\n"]
        for number, line in enumerate([lines[0], *lines[2:]]):
            if number == 1:
                parts.append("</thead>\n<tbody>\n")
            tag = "th" if number == 0 else "td"
            cells = self._split_row(line.strip(" "))
            parts.append("<tr>\n")
            for index, style in enumerate(styles):
                cell = cell_html(cells[index].strip(" ") if index < len(cells) else "", escapable)
                if cell is None:
                    return None
                parts.append(f"<{tag}{style}>{cell}</{tag}>\n")
            parts.append("</tr>\n")
        parts.append("</tbody>\n</table>")
        return "".join(parts)

    def _split(self, row: str) -> list[str]:
        if "`" in row:
            return super()._split(row)
        cells, start = [], 0
        for match in ROW_PIPES.finditer(row):
            if match.group(3):
                cells.append(row[start : match.start()])
                start = match.end()
        cells.append(row[start:])
        return cells

    def _build_row(self, row: str, parent: etree.Element, align: Sequence[str | None]) -> None:
        super()._build_row(row, parent, align)
        escapable = self.parser.md.ESCAPED_CHARS
        for cell in parent[-1]:
            plain = plain_cell(cell.text or "", escapable)
            if plain is not None:
                cell.text = AtomicString(plain)


def plain_cell(text: str, escapable: Sequence[str]) -> str | None:
    """The cell's text with its escapes resolved, where no inline pattern could change it; else None."""
    if "\\" not in text:
        return None if INLINE_MARKUP.search(text) else text
    rest = BACKSLASH_ESCAPE.sub(lambda m: "" if m.group(1) in escapable else m.group(0), text)
    if INLINE_MARKUP.search(rest):
        return None
    # Of < > &, which the serializer writes as entities, only > can be escaped; it is written as any > is.
    return BACKSLASH_ESCAPE.sub(lambda m: m.group(1), text)


# The markup a verdict cell holds besides plain text: bold, a line break and small print.
SIMPLE_MARKUP = re.compile(r"(\*\*|<br>|<small>|</small>)")
STRONG = "**"


def cell_html(text: str, escapable: Sequence[str]) -> str | None:
    """A cell's HTML where it is plain text, or plain text with **bold**, <br> and <small>...</small> (the
    verdict tables); None where anything else could change it, for Python-Markdown to convert."""
    if "*" not in text and "<" not in text:
        plain = plain_cell(text, escapable)
        # The serialiser's own escaping, so that the cell reads as it would have been written.
        return None if plain is None else _escape_cdata(plain)
    if "***" in text:
        return None
    parts: list[str] = []
    bold = False
    for number, piece in enumerate(SIMPLE_MARKUP.split(text)):
        if number % 2 == 0:  # text between markup
            plain = plain_cell(piece, escapable) if piece else ""
            # Emphasis needs its text up against the asterisks (else they are taken as they are).
            if plain is None or (bold and (not piece or piece != piece.strip())):
                return None
            parts.append(_escape_cdata(plain))
        elif piece == STRONG:
            parts.append("</strong>" if bold else "<strong>")
            bold = not bold
        elif bold:
            return None  # HTML inside bold: left to Python-Markdown
        else:
            parts.append(piece)  # raw HTML, written as it stands
    return None if bold else "".join(parts)


def _alignments(separator: Sequence[str]) -> list[str | None]:
    """Each column's alignment from the separator row, as TableProcessor.run reads it."""
    sides: list[str | None] = []
    for cell in (cell.strip(" ") for cell in separator):
        if cell.startswith(":") and cell.endswith(":"):
            sides.append("center")
        elif cell.startswith(":"):
            sides.append("left")
        else:
            sides.append("right" if cell.endswith(":") else None)
    return sides


# A div around a table, as site_src/partials/_verdicts.md.j2 writes it: its class and md_in_html's attribute.
TABLE_DIV_START = re.compile(r'<div class="([\w -]+)" markdown>')
DIV_END = "</div>"
# After superfences keeps fenced code aside (25), so that a div in a fence stays code; before md_in_html (20).
TABLE_DIV_PRIORITY = 24


class TableDivPreprocessor(Preprocessor):
    """Each `<div class="..." markdown>` at the top level of the page that holds one table of plain cells
    (FastTableProcessor's fast path) and nothing else, replaced by its HTML kept aside. Anything else (a
    div inside another HTML block or a comment, a div with more than the table) is left to md_in_html."""

    def run(self, lines: list[str]) -> list[str]:
        processor = self.md.parser.blockprocessors["table"]
        if not isinstance(processor, FastTableProcessor):
            return lines
        kept: list[str] = []
        depth, in_comment, index = 0, False, 0
        while index < len(lines):
            line = lines[index]
            start = TABLE_DIV_START.fullmatch(line)
            if start and depth == 0 and not in_comment:
                html, end = self._table_div(processor, start.group(1), lines, index)
                if html is not None:
                    kept += ["", self.md.htmlStash.store(html), ""]
                    index = end + 1
                    continue
            depth, in_comment = _html_nesting(line, depth, in_comment)
            kept.append(line)
            index += 1
        return kept

    @staticmethod
    def _table_div(
        processor: FastTableProcessor, css_class: str, lines: list[str], start: int
    ) -> tuple[str | None, int]:
        """The div's HTML and the index of its last line; None where it holds more than a plain table."""
        try:
            end = lines.index(DIV_END, start + 1)
        except ValueError:
            return None, start
        inner = lines[start + 1 : end]
        if len(inner) < 2 or inner[0] != "" or inner[-1] != "":
            return None, start
        table = inner[1:-1]
        if not table or not all(line.startswith("|") for line in table):
            return None, start
        if not processor.test(etree.Element("div"), "\n".join(table)):
            return None, start
        html = processor._plain_table_html(table)
        return (None if html is None else f'<div class="{css_class}">\n{html}\n</div>'), end


def _html_nesting(line: str, depth: int, in_comment: bool) -> tuple[int, bool]:
    """How many HTML blocks are open after this line, and whether a comment is: roughly, by the lines that
    start or end a div or a comment, which is as far as the verdict divs need telling apart."""
    if in_comment:
        return depth, "-->" not in line
    if line.startswith("<!--"):
        return depth, "-->" not in line
    if line.startswith("<div") and DIV_END not in line:
        return depth + 1, False
    if line.startswith(DIV_END) and depth > 0:
        return depth - 1, False
    return depth, False


class FastTableExtension(TableExtension):
    def extendMarkdown(self, md: Markdown) -> None:
        super().extendMarkdown(md)
        md.parser.blockprocessors.register(FastTableProcessor(md.parser, self.getConfigs()), "table", 75)
        md.preprocessors.register(TableDivPreprocessor(md), "connlab_table_divs", TABLE_DIV_PRIORITY)


def makeExtension(**kwargs: object) -> FastTableExtension:
    return FastTableExtension(**kwargs)
