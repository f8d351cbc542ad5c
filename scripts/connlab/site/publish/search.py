"""Machine pages in the search index: each page's summary line, the words of its headings, and the words of
its tables that no other page of the site holds.

Machine pages are not MkDocs pages (connlab.site.publish.build stamps them), so MkDocs' search plugin never
sees them; publishing adds an entry per machine page to the index file MkDocs wrote
(search/search_index.json, the format Material's search reads: {"config", "docs": [{"location", "title",
"text"}]}). An entry holding a page's whole text would not scale: a machine's page has some 50 KB of text,
and the index is fetched by every page of the site, so ten thousand machines would make it hundreds of
megabytes. Most of that text is the articles' own (each claim's sentence, each table's column names, the
section titles) and numbers nobody searches for, so an entry holds words, each once:

- the summary line (what the machine is), as it reads, first: Material shows the start of an entry;
- every word of the page's headings (h2 to h6): a search for a section's title finds the machines' pages
  that have that section;
- the words of the page's tables that no page MkDocs built holds (an error a pooler printed, a wait event,
  a configuration setting, a commit): the rest of a table's words find the article, whose tables have a
  column or a line per machine, and every machine page with them would bury it.

A word is what the index's tokenizer makes of the text (its config's `separator`), without the
punctuation at its ends; one without a letter (a measured figure) is left out unless it is a version
(1.18.0). docs/PERFORMANCE.md has the index's size per machine.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from pathlib import Path

from connlab.contract.files import write_if_changed

# Material's default, for an index whose config names none.
DEFAULT_SEPARATOR = r"[\s\-]+"
# A token's word: from its first word character to its last (the punctuation at its ends left off).
_WORD_CORE = re.compile(r"\w(?:.*\w)?", re.S)
_LETTER = re.compile(r"[^\W\d_]")
_VERSION = re.compile(r"\d+(?:\.\d+){2,}")
_TAG = re.compile(r"<[^>]+>")
_HEADING = re.compile(r"h[2-6]")


def words(text: str, separator: str | None = DEFAULT_SEPARATOR) -> list[str]:
    """The text's words as the index's tokenizer splits it (None: at whitespace), punctuation off their ends,
    each once (the first spelling of a word kept, whatever its case): those with a letter, and versions."""
    tokens = text.split() if separator is None else re.split(separator, text)
    kept: dict[str, str] = {}
    # A page's tables repeat most of their tokens: each distinct token is looked at once, in first-seen order.
    for token in dict.fromkeys(tokens):
        core = _WORD_CORE.search(token)
        word = core.group() if core else ""
        key = word.lower()
        if key in kept or not (_LETTER.search(word) or _VERSION.fullmatch(word)):
            continue
        kept[key] = word
    return list(kept.values())


# The parts of a fragment an entry reads, found in the HTML the build itself wrote (Python-Markdown's and
# Material's, never a contributor's): a heading h2 to h6 and a table, neither nested in its own kind; inside
# them, a heading's permalink and a script or a style are no reader's text, and a cell or a line break
# separates words. A regular expression over the whole fragment finds them in C, where an HTML parser in
# Python spent most of a cold site build's time on a thousand machines' pages (docs/PERFORMANCE.md).
_HEADINGS = re.compile(r"<h([2-6])\b[^>]*>(.*?)</h\1\s*>", re.S | re.I)
_TABLE_START = re.compile(r"<table\b[^>]*>")
_TABLE_END = "</table>"
_NOT_TEXT = re.compile(
    r"<(script|style)\b[^>]*>.*?</\1\s*>|<a\b[^>]*\bclass=\"[^\"]*\bheaderlink\b[^\"]*\"[^>]*>.*?</a\s*>",
    re.S | re.I,
)
_SEPARATING_TAG = re.compile(r"<(?:br|td|th)\b[^>]*>", re.I)


def _text(html_part: str) -> str:
    """A heading's or a table's text: no permalink, script or style; a space for each cell and line break."""
    kept = _SEPARATING_TAG.sub(" ", _NOT_TEXT.sub("", html_part))
    return html.unescape(_TAG.sub("", kept))


def _tables(fragment: str) -> list[str]:
    """The inside of each table, found by plain search for its end: a lazy regular expression over a page's
    tables tried the end tag at every character."""
    found = []
    start = _TABLE_START.search(fragment)
    while start:
        end = fragment.find(_TABLE_END, start.end())
        if end < 0:
            break
        found.append(fragment[start.end() : end])
        start = _TABLE_START.search(fragment, end)
    return found


def page_words(fragment: str) -> dict[str, str]:
    """A machine page's fragment: the words of its headings and of its tables (those not in its headings),
    each a space-separated string, kept with the page's stamping (build.STAMPED_INDEX) so that a build
    reads no fragment it does not stamp."""
    heading_text = " ".join(_text(found.group(2)) for found in _HEADINGS.finditer(fragment))
    table_text = " ".join(_text(table) for table in _tables(fragment))
    # Split at whitespace only: the index's own separator splits them again as it builds the entry.
    headings = words(heading_text, None)
    known = {word.lower() for word in headings}
    tables = [word for word in words(table_text, None) if word.lower() not in known]
    return {"headings": " ".join(headings), "tables": " ".join(tables)}


def vocabulary(docs: Iterable[dict[str, str]], separator: str) -> set[str]:
    """Every word, lower-case, of the index's entries: their titles and their text (HTML in Material's
    index)."""
    text = " ".join(f"{doc.get('title', '')} {_TAG.sub(' ', doc.get('text', ''))}" for doc in docs)
    return {word.lower() for word in words(html.unescape(text), separator)}


def machine_entry(
    location: str, title: str, summary: str, page: dict[str, str], elsewhere: set[str], separator: str
) -> dict[str, str]:
    """A machine page's entry: its summary line, then its headings' words not in the summary, then its
    tables' words that neither the summary nor any page in `elsewhere` (the vocabulary of the pages MkDocs
    built) holds."""
    said = {word.lower() for word in words(f"{title} {summary}", separator)}
    headings = [word for word in words(page.get("headings", ""), separator) if word.lower() not in said]
    said |= {word.lower() for word in headings}
    tables = [
        word
        for word in words(page.get("tables", ""), separator)
        if word.lower() not in said and word.lower() not in elsewhere
    ]
    text = " ".join(part for part in (summary, " ".join(headings), " ".join(tables)) if part)
    return {"location": location, "title": title, "text": text}


def add_to_search(index_file: Path, made: Path, machines: list[dict[str, str]]) -> None:
    """The search index MkDocs made, with an entry per machine page (machines: each page's location, title,
    summary, and its headings' and tables' words from page_words)."""
    if not made.is_file():  # no search plugin configured
        return
    index = json.loads(made.read_text(encoding="utf-8"))
    separator = (index.get("config") or {}).get("separator") or DEFAULT_SEPARATOR
    elsewhere = vocabulary(index["docs"], separator)
    entries = [
        machine_entry(page["location"], page["title"], page.get("summary", ""), page, elsewhere, separator)
        for page in machines
    ]
    index["docs"] = [*index["docs"], *entries]
    write_if_changed(index_file, json.dumps(index, ensure_ascii=False, separators=(",", ":")))
