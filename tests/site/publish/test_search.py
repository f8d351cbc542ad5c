"""Machine pages in the search index (connlab.site.publish.search): a machine's page is found by the words of
its headings and by the words of its tables that no other page holds, and its entry stays small enough for
ten thousand machines.

Read from the search index of the site built from the pinned results (conftest's `built_site`, or
CONNLAB_SITE_DIR), in the format Material's search reads; no browser needed.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from connlab.site.publish.search import machine_entry, page_words, vocabulary

# A machine page's entry at most (its location, title, summary line and words, as JSON): at ten thousand
# machines the index all pages fetch would hold some 20 MB of them (docs/PERFORMANCE.md has the figures).
ENTRY_LIMIT_BYTES = 2_000
# In the pinned results' amd-epyc-2c-24g: a word of a claim in its verdict table that no entry MkDocs made
# holds as a word (the article's table has it, but MkDocs' index runs a table's cells together:
# "threefold.Project's"), and a section title.
TABLE_WORD = "threefold"
HEADING = "Where does the time go past the peak?"

_TAG = re.compile(r"<[^>]+>")
_EDGE = re.compile(r"^\W+|\W+$")


@pytest.fixture(scope="module")
def index(built_site: Path) -> dict[str, Any]:
    return json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))


def machine_pages(built_site: Path) -> list[Path]:
    pages = sorted((built_site / "machines").glob("*/index.html"))
    assert pages, f"no machine page in {built_site}"
    return pages


def tokens(text: str, separator: str) -> set[str]:
    """What the index's tokenizer makes of a text: its config's separator, punctuation off the ends."""
    split = re.split(separator, html.unescape(_TAG.sub(" ", text)))
    found = (_EDGE.sub("", token).lower() for token in split)
    return {token for token in found if re.search(r"[^\W\d_]", token)}


def content(page: Path) -> str:
    """The machine's own part of its page: Material's article, without the chart specs."""
    text = page.read_text(encoding="utf-8")
    article = re.search(r"<article\b.*?</article>", text, re.S)
    assert article, page
    return re.sub(r"<script\b.*?</script>", " ", article.group(0), flags=re.S)


def entry_for(index: dict[str, Any], machine: str) -> dict[str, str]:
    found = [doc for doc in index["docs"] if doc["location"] == f"machines/{machine}/"]
    assert len(found) == 1, f"{len(found)} entries for machines/{machine}/"
    return found[0]


def test_a_machine_pages_table_text_is_in_the_search_index(built_site: Path, index: dict[str, Any]) -> None:
    separator = index["config"]["separator"]
    page = content(built_site / "machines" / "amd-epyc-2c-24g" / "index.html")
    assert TABLE_WORD in tokens(" ".join(re.findall(r"<table\b.*?</table>", page, re.S)), separator)
    assert TABLE_WORD in entry_for(index, "amd-epyc-2c-24g")["text"].split()
    pages = [doc["location"] for doc in index["docs"] if TABLE_WORD in tokens(doc["text"], separator)]
    human = [where for where in pages if not re.fullmatch(r"machines/[^/#]+/", where)]
    assert human == [], "the word is on a page MkDocs built too; pick one only machines' tables have"


def test_a_machine_pages_headings_are_in_the_search_index(index: dict[str, Any]) -> None:
    separator = index["config"]["separator"]
    entry = entry_for(index, "amd-epyc-2c-24g")
    assert tokens(HEADING, separator) <= tokens(entry["title"] + " " + entry["text"], separator)


def test_every_heading_and_every_table_word_no_other_page_has_reaches_the_machines_entry(
    built_site: Path, index: dict[str, Any]
) -> None:
    separator = index["config"]["separator"]
    machines = {page.parent.name: page for page in machine_pages(built_site)}
    entries = {machine: entry_for(index, machine) for machine in machines}
    human = [doc for doc in index["docs"] if doc not in entries.values()]
    elsewhere = set().union(*(tokens(doc["title"] + " " + doc["text"], separator) for doc in human))
    for machine, page in machines.items():
        text = content(page)
        headings = " ".join(re.findall(r"<h[2-6][^>]*>(.*?)</h[2-6]>", text, re.S)).replace("¶", "")
        tables = " ".join(re.findall(r"<table\b.*?</table>", text, re.S))
        indexed = tokens(entries[machine]["title"] + " " + entries[machine]["text"], separator)
        assert tokens(headings, separator) - indexed == set(), machine
        assert tokens(tables, separator) - elsewhere - indexed == set(), machine


def test_a_machine_pages_entry_stays_small(index: dict[str, Any], built_site: Path) -> None:
    for page in machine_pages(built_site):
        entry = entry_for(index, page.parent.name)
        size = len(json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode())
        assert size <= ENTRY_LIMIT_BYTES, f"{page.parent.name}: {size} bytes"


FRAGMENT = """<h1 id="m">m<a class="headerlink" href="#m">&para;</a></h1>
<p>m: a test machine, 2 CPU threads.</p>
<h2 id="a">Where throughput peaks<a class="headerlink" href="#a" title="Permanent link">&para;</a></h2>
<figure class="connlab-chart"><script type="application/json">{"hidden": "specword"}</script></figure>
<table><thead><tr><th>pooler</th><th>outcome</th></tr></thead>
<tbody><tr><td>pgbouncer-prepared</td>
<td>ERROR: prepared statement "P_0" already exists<br><small>1.18.0, 2,000 tps</small></td></tr></tbody>
</table>"""


def test_an_entry_holds_the_summary_then_headings_then_the_table_words_no_other_page_has() -> None:
    words = page_words(FRAGMENT)
    assert words["headings"] == "Where throughput peaks"
    assert "specword" not in words["tables"] and "2,000" not in words["tables"].split()
    separator = r"[\s\-]+"  # Material's default
    other_page = {"title": "Pool sizing", "text": "<p>The pooler's outcome: error.</p>"}
    elsewhere = vocabulary([other_page], separator)
    summary = "m: a test machine, 2 CPU threads."
    entry = machine_entry("machines/m/", "m", summary, words, elsewhere, separator)
    assert entry == {
        "location": "machines/m/",
        "title": "m",
        "text": "m: a test machine, 2 CPU threads. Where throughput peaks "
        "pooler pgbouncer prepared statement P_0 already exists 1.18.0 tps",
    }
