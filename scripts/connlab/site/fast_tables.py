"""Python-Markdown's tables, converted faster where a cell holds plain text: the same HTML, byte for byte.

A machine's page holds some 280 table lines and 1,500 cells. Python-Markdown runs each cell through every
inline pattern (code, escapes, links, emphasis, HTML, entities...), which made the tables about two thirds of
the page's conversion. Most cells are numbers or words, which no pattern can change; such a cell is kept as
Markdown would write it, with its backslash escapes resolved (`select\\-only` is `select-only`), and skips
the inline patterns. A cell with anything a pattern could take (a backtick, emphasis, a link, HTML, an
entity, attributes) is converted by Python-Markdown as before. A row with no backtick is split on its pipes
directly, as Python-Markdown's own splitting comes to when no code span can hold a pipe.

Named in mkdocs.yml in place of `tables`; tests/test_fast_tables.py compares every page of the site with
Python-Markdown's own tables.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from collections.abc import Sequence

from markdown import Markdown
from markdown.extensions.tables import TableExtension, TableProcessor
from markdown.util import ETX, STX, AtomicString

# What an inline pattern of the configured extensions starts with: code (`), escapes (\), emphasis (* _),
# links and images ([ ] !), HTML and autolinks (< >), entities (&), attr_list's attributes ({ }), and the
# placeholders Python-Markdown itself writes (STX, ETX).
INLINE_MARKUP = re.compile(r"[`\\*_\[\]!<>&{}" + STX + ETX + "]")
BACKSLASH_ESCAPE = re.compile(r"\\(.)")
# Without backticks, Python-Markdown's splitting keeps an escaped pipe (\|, after any \\ pairs) in its cell.
ROW_PIPES = re.compile(r"(\\\\)|(\\\|)|(\|)")


class FastTableProcessor(TableProcessor):
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


class FastTableExtension(TableExtension):
    def extendMarkdown(self, md: Markdown) -> None:
        super().extendMarkdown(md)
        md.parser.blockprocessors.register(FastTableProcessor(md.parser, self.getConfigs()), "table", 75)


def makeExtension(**kwargs: object) -> FastTableExtension:
    return FastTableExtension(**kwargs)
