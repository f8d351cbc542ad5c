"""The verdict tables on a phone, in Chromium: at 390 x 844 each is a card per claim (a line per machine,
labelled with its name), no table or card list is taller than six screens (the claims past a fold are in a
<details>, closed), and no word or number in a verdict cell is broken across lines; at 1280 x 900 they are
still tables. On every article and on a machine's page.

The site is built from the pinned results (conftest's `built_site`, or CONNLAB_SITE_DIR); skipped without
Chromium.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.browser import evaluate_within

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

ARTICLES = ("too-many-connections", "pool-sizing", "pgbouncer-trade", "four-poolers")
PHONE = (390, 844)
DESKTOP = (1280, 900)
MOST_SCREENS = 6
# Every table laid out at once, in or out of view (connlab.css lets an out-of-view table wait).
ALL_LAID_OUT = ".md-typeset__scrollwrap { content-visibility: visible !important; }"

# Each verdict table's block (the table, and the claims folded under it) as the page shows it: its height,
# and how its rows and cells are laid out.
BLOCKS_JS = """
async () => {
  await new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 5000); });
  return [...document.querySelectorAll(".verdict-table")].map(block => {
    const tables = [...block.querySelectorAll("table")];
    const rows = tables.flatMap(t => [...t.tBodies[0].rows]);
    const shown = rows.filter(r => !r.closest("details:not([open])"));
    return {
      height: block.getBoundingClientRect().height,
      rows: rows.length,
      shown: shown.length,
      folded: block.querySelectorAll("details:not([open])").length,
      tableDisplay: tables.map(t => getComputedStyle(t).display),
      rowDisplay: [...new Set(shown.map(r => getComputedStyle(r).display))],
      // A card's lines past its claim: each labelled, the label written before it.
      unlabelled: shown.flatMap(r => [...r.cells].slice(1)).filter(c => !c.dataset.label).length,
      labels: shown.flatMap(r => [...r.cells].slice(1))
        .map(c => getComputedStyle(c, "::before").content),
      width: Math.max(0, ...shown.map(r => r.getBoundingClientRect().width)),
    };
  });
}
"""

# Every word and number of every verdict cell (the folded claims opened) that the page laid out on more than
# one line: a token's range has boxes on two lines where it is broken. A hyphen between two letters ends a
# token ("per-core" may break after "per-", as a line of print does), never one next to a digit (a date, a
# range, a machine's name).
BROKEN_TOKENS_JS = """
async () => {
  document.querySelectorAll(".verdict-table details").forEach(d => { d.open = true; });
  await new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 5000); });
  const broken = [];
  let tokens = 0;
  for (const cell of document.querySelectorAll(".verdict-table th, .verdict-table td")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+?(?:(?<=\\p{L}-)(?=\\p{L})|(?=\\s)|$)/gu)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = [...range.getClientRects()].filter(r => r.width > 0).map(r => r.top);
        if (!tops.length) continue;
        tokens += 1;
        if (Math.max(...tops) - Math.min(...tops) > 4) broken.push(match[0]);
      }
    }
  }
  return {tokens, broken};
}
"""


def machine_page(built_site: Path) -> str:
    """The page of the first contributed machine: its tables have a single machine's column, the longest
    with a row for each claim its runs reach."""
    machines = json.loads((built_site.parent / "data" / "machines.json").read_text())
    return f"machines/{min(str(m['id']) for m in machines if not m['published'])}/"


PAGES = [f"articles/{slug}/" for slug in ARTICLES] + ["machine"]


@pytest.fixture
def path(request: pytest.FixtureRequest, built_site: Path) -> str:
    return machine_page(built_site) if request.param == "machine" else request.param


@contextlib.contextmanager
def opened(browser: Browser, url: str, size: tuple[int, int]) -> Iterator[Page]:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(url, wait_until="load")
        page.add_style_tag(content=ALL_LAID_OUT)
        yield page
    finally:
        page.close()


@pytest.mark.parametrize("path", PAGES, indirect=True)
def test_on_a_phone_each_claim_is_a_card_and_no_table_is_taller_than_six_screens(
    browser: Browser, site_url: str, path: str
) -> None:
    with opened(browser, site_url + path, PHONE) as page:
        blocks = evaluate_within(page, BLOCKS_JS)
    assert blocks, "the page has no verdict table"
    width, height = PHONE
    for block in blocks:
        assert block["height"] <= MOST_SCREENS * height, block
        # A long table shows its first claims and folds the rest, closed; a short one shows every claim.
        assert block["shown"] >= min(3, block["rows"])
        assert (block["folded"] == 1) == (block["shown"] < block["rows"]), block
        assert set(block["tableDisplay"]) == {"block"} and block["rowDisplay"] == ["block"], block
        assert 0 < block["width"] <= width
        assert block["unlabelled"] == 0, "a card's line without its column's name"
        labels = block["labels"]
        assert all(label.startswith('"') and label.endswith(':"') for label in labels), labels


@pytest.mark.parametrize("path", PAGES, indirect=True)
def test_on_a_phone_no_word_or_number_in_a_verdict_cell_is_broken(
    browser: Browser, site_url: str, path: str
) -> None:
    with opened(browser, site_url + path, PHONE) as page:
        found = evaluate_within(page, BROKEN_TOKENS_JS)
    assert found["tokens"] > 100, found
    assert found["broken"] == []


@pytest.mark.parametrize("path", PAGES, indirect=True)
def test_on_a_desktop_the_verdict_tables_are_tables(browser: Browser, site_url: str, path: str) -> None:
    with opened(browser, site_url + path, DESKTOP) as page:
        blocks = evaluate_within(page, BLOCKS_JS)
        headings = page.evaluate(
            "() => [...document.querySelectorAll('.verdict-table table:not(details table) thead')]"
            ".map(h => getComputedStyle(h).display)"
        )
    assert blocks
    for block in blocks:
        assert set(block["tableDisplay"]) == {"table"} and block["rowDisplay"] == ["table-row"], block
        # A cell's label is for a phone's card only.
        assert set(block["labels"]) == {"none"}, block["labels"]
    assert set(headings) == {"table-header-group"}
