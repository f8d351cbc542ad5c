"""Drive Chromium against the built site's verdict tables: at 1280 px the claim text is readable (a claim
column of real width, every cell inside the table, the claims folded under a long table at the same width)
and the table needs no horizontal scrolling (tests/browser/test_verdict_cards_browser.py holds them on a
phone).

The site is built from the pinned results (conftest's `built_site`); skipped without Chromium.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.browser import evaluate_within

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

ARTICLES = ("too-many-connections", "pool-sizing")
WIDTH = 1280
# A claim column narrower than this wraps a sentence every two or three words: not readable.
MIN_CLAIM_COLUMN_PX = 200

# The table is brought into view first, as a reader scrolls to it: a table out of view is not laid out
# (connlab.css: content-visibility), and would neither scroll nor have any text to measure. The claims
# folded under a long table (a table of their own in a <details>, connlab.site.render.verdict_html) are
# opened and measured with it.
MEASURE_JS = """
async () => {
  const table = document.querySelector(".verdict-table table");
  if (!table) return null;
  const block = table.closest(".verdict-table");
  block.querySelectorAll("details").forEach(d => { d.open = true; });
  table.scrollIntoView({block: "nearest"});
  // Two frames, or five seconds where no frame comes: an evaluate has no timeout of its own.
  await new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 5000); });
  const tables = [...block.querySelectorAll("table")];
  const scrollers = tables.map(t => t.closest(".md-typeset__scrollwrap") || t.parentElement);
  const rows = tables.flatMap(t => [...t.querySelectorAll("tbody tr")]);
  const outside = rows.flatMap(r => [...r.cells])
    .filter(c => {
      const box = c.closest("table").getBoundingClientRect();
      const b = c.getBoundingClientRect();
      return b.left < box.left - 1 || b.right > box.right + 1;
    })
    .length;
  return {
    scrolling: scrollers.filter(s => s.scrollWidth > s.clientWidth).length,
    claimColumn: rows.length ? rows[0].cells[0].getBoundingClientRect().width : 0,
    // The claim column of the table and of the claims folded under it: one width.
    claimColumns: [...new Set(tables.map(t => Math.round(t.tBodies[0].rows[0].cells[0].offsetWidth)))],
    claims: rows.map(r => r.cells[0].innerText.split("\\n")[0].trim()),
    headers: [...table.querySelectorAll("thead th")].map(th => th.innerText.replace(/\\s+/g, " ").trim()),
    outside,
  };
}
"""


def measure(browser: Browser, url: str) -> dict | None:
    """Open the page at 1280 px and measure its verdict table."""
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    with contextlib.closing(page):
        page.goto(url)
        return evaluate_within(page, MEASURE_JS)


def built_claims(built_site: Path, slug: str, machine: str | None = None) -> list[str]:
    """The claim sentences the build judged, from build/data next to the site (when it is there); with a
    machine, those its page shows: the ones whose experiments it ran."""
    path = built_site.parent / "data" / "claims" / f"{slug}.json"
    if not path.is_file():
        pytest.skip(f"no {path}: the claims data sits next to the built site")
    claims = json.loads(path.read_text())["claims"]
    if machine is not None:
        claims = [
            claim
            for claim in claims
            if any(v["machine"] == machine and v["verdict"] != "not measured" for v in claim["verdicts"])
        ]
    # A claim judged across machines has one verdict, shown beside its chart rather than as a row.
    return [claim["claim"] for claim in claims if claim.get("scope") != "across"]


@pytest.mark.parametrize("slug", ARTICLES)
def test_verdict_table_reads_at_1280_px(browser: Browser, site_url: str, built_site: Path, slug: str) -> None:
    measured = measure(browser, f"{site_url}articles/{slug}/")
    assert measured is not None, "the article has no verdict table"
    assert measured["scrolling"] == 0, "the verdict table scrolls horizontally"
    assert measured["claimColumn"] >= MIN_CLAIM_COLUMN_PX
    assert len(measured["claimColumns"]) == 1, "the folded claims' table is not as wide as the first"
    assert measured["outside"] == 0, "cells spill outside the table"
    # Every claim is a row (those past the first few folded under the table), its sentence readable as
    # written.
    assert measured["claims"] == built_claims(built_site, slug)
    # The seed's figure beside the claim, shown, never judged against itself; with few machines, a column
    # per machine that ran the article's experiments (connlab.data.answers), its value, range and verdict.
    assert measured["headers"][:2] == ["claim", "the source article's figure"]
    machine_headers = [h for h in measured["headers"][2:] if "server core" in h]
    assert 1 <= len(machine_headers) == len(measured["headers"]) - 2 <= 5, measured["headers"]


def test_a_machine_page_has_its_own_verdict_column(browser: Browser, site_url: str, built_site: Path) -> None:
    machines = json.loads((built_site.parent / "data" / "machines.json").read_text())
    machine = min(str(m["id"]) for m in machines if not m["published"])
    measured = measure(browser, f"{site_url}machines/{machine}/")
    assert measured is not None, "the machine page has no verdict table"
    assert measured["scrolling"] == 0, "the verdict table scrolls horizontally"
    assert measured["outside"] == 0, "cells spill outside the table"
    # The page's first table is the first article's, in the site's order, of those whose experiments the
    # machine ran: too-many-connections. It has a row for each claim the machine's data could reach; those
    # whose experiments were not run here are left out (the page's last line names the experiments).
    assert measured["claims"] == built_claims(built_site, "too-many-connections", machine)
    machine_headers = [h for h in measured["headers"][2:] if "server core" in h]
    assert len(machine_headers) == 1 and machine_headers[0].startswith(machine), measured["headers"]
    # No summary across machines: the page must not change when another machine is added.
    assert "across machines" not in measured["headers"]
