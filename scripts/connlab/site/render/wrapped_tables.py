"""Every table of a page written already in the scroll wrapper Material's script puts it in, at build time.

Material wraps each table without a class (`table:not([class])`) in `div.md-typeset__scrollwrap >
div.md-typeset__table` once its script runs, at the end of the page's start: every table is then taken out of
the page and put back, after the browser has laid out the page once. A wrapper out of view is not laid out
or styled (connlab.css: content-visibility), but one just made is until the browser has laid out the page
again, and Material restyles the whole page half a dozen times before that: on a machine's page, two thousand
table elements were restyled each time, a good part of the page's start. Written here, the
wrappers are in the page from its first layout, out of view ones skip from then on, and nothing is moved.

The table gets the class TABLE_CLASS, so that Material's script leaves it alone (it wraps only tables
without a class); Material's look for tables without a class is restated for that class in
site_src/assets/tables.css (tests/site/render/test_wrapped_tables.py holds the two to each other). A table
that already has a class is left as it is, as Material's script leaves it.
"""

from __future__ import annotations

import re

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor

TABLE_CLASS = "connlab-table"
# A table tag with no class attribute, as Python-Markdown (and render/tables.py and render/verdict_html.py)
# write it: `<table>`, or with other attributes.
_CLASSLESS_TABLE = re.compile(r"<table(?![^>]*\bclass=)(\s[^>]*)?>")
_TABLE_END = "</table>"
WRAPPER_START = '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
WRAPPER_END = "</div></div>"


def wrap_tables(html: str) -> str:
    """Each table without a class in Material's two wrappers, with TABLE_CLASS. Tables are never nested in
    what Markdown writes, so a table's end is the first `</table>` after its start."""
    parts = []
    position = 0
    for start in _CLASSLESS_TABLE.finditer(html):
        if start.start() < position:  # inside a table already wrapped (raw HTML nesting one)
            continue
        end = html.find(_TABLE_END, start.end())
        if end < 0:
            break
        attributes = start.group(1) or ""
        parts += [
            html[position : start.start()],
            WRAPPER_START,
            f'<table class="{TABLE_CLASS}"{attributes}>',
            html[start.end() : end + len(_TABLE_END)],
            WRAPPER_END,
        ]
        position = end + len(_TABLE_END)
    parts.append(html[position:])
    return "".join(parts)


class WrappedTablesPostprocessor(Postprocessor):
    def run(self, text: str) -> str:
        return wrap_tables(text) if "<table" in text else text


class WrappedTablesExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # After raw HTML is put back (priority 30): the tables the render writes as HTML are raw HTML to it.
        md.postprocessors.register(WrappedTablesPostprocessor(md), "connlab_wrapped_tables", 25)


def makeExtension(**kwargs: object) -> WrappedTablesExtension:
    return WrappedTablesExtension(**kwargs)
