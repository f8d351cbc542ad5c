"""Drive Chromium against each built article as a reader would: the short answer, with a measured number, is
on the first screen at desktop and phone sizes; the verdict legend comes before the table and every verdict
cell has a word and a mark; every table-of-contents entry lands on its heading.

The site is built from the pinned results (conftest's `built_site`, or CONNLAB_SITE_DIR); the first screen
of each article at 1280 px is saved in build/screenshots/ for review. Skipped without Chromium.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

import pytest

from browser_support import CHARTS_RENDERED_JS, FIGURE
from connlab.paths import SCREENSHOTS_DIR

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

ARTICLES = ("too-many-connections", "pool-sizing", "pgbouncer-trade", "four-poolers")
SCREENS = {"desktop": (1280, 900), "phone": (390, 844)}
# A table-of-contents jump lands its heading this close to where the page puts headings (under the header).
LANDING_PX = 100
MARKS = {"holds": "✓", "does not hold": "✗", "inconclusive": "~", "cannot be evaluated": "–", "not run": "·"}

FIRST_BULLET_JS = """
() => {
  const item = document.querySelector(".short-answer li");
  if (!item) return null;
  const box = item.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, text: item.innerText, height: window.innerHeight};
}
"""

LEGEND_AND_CELLS_JS = """
() => {
  const legend = document.querySelector(".verdict-legend");
  const table = document.querySelector(".verdict-table table");
  if (!legend || !table) return null;
  const cells = [...table.querySelectorAll("tbody tr")].flatMap(row => [...row.cells].slice(2));
  return {
    legendFirst: Boolean(legend.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING),
    cells: cells.map(cell => [...cell.querySelectorAll(".verdict")].map(v => ({
      mark: (v.querySelector(".verdict__mark") || {}).textContent || "",
      text: v.textContent.trim(),
      colour: getComputedStyle(v).backgroundColor,
    }))),
  };
}
"""

# Material makes the entries' links absolute once its script runs: each entry is told by its hash.
TOC_LINKS_JS = """
() => [...document.querySelectorAll(".md-sidebar--secondary a.md-nav__link")]
  .filter(a => a.hash && a.pathname === location.pathname)
  .map(a => decodeURIComponent(a.hash.slice(1)))
"""

# Where the heading sits after the jump, once nothing on the page has moved for a few frames.
LANDED_JS = """
async (id) => {
  const target = document.getElementById(id);
  const header = document.querySelector(".md-header");
  let last = null, still = 0;
  for (let frame = 0; frame < 120 && still < 5; frame++) {
    await new Promise(r => { requestAnimationFrame(r); setTimeout(r, 50); });
    const top = target.getBoundingClientRect().top;
    still = last !== null && Math.abs(top - last) < 1 ? still + 1 : 0;
    last = top;
  }
  const scroller = document.scrollingElement;
  const atBottom = scroller.scrollTop >= scroller.scrollHeight - window.innerHeight - 1;
  return {top: last, header: header ? header.getBoundingClientRect().bottom : 0, atBottom,
          height: window.innerHeight};
}
"""


@contextlib.contextmanager
def opened(browser: Browser, url: str, width: int, height: int) -> Page:  # type: ignore[misc]
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(url)
        page.wait_for_load_state("load")
        yield page
    finally:
        page.close()


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("slug", ARTICLES)
def test_the_short_answer_with_a_number_is_on_the_first_screen(
    browser: Browser, site_url: str, slug: str, screen: str
) -> None:
    width, height = SCREENS[screen]
    with opened(browser, f"{site_url}articles/{slug}/", width, height) as page:
        bullet = page.evaluate(FIRST_BULLET_JS)
        assert bullet is not None, "the article has no short answer"
        assert bullet["top"] >= 0 and bullet["top"] < bullet["height"], bullet
        # The bullet's lead, its answer, is in view; a measured figure is part of it.
        assert re.search(r"\d", bullet["text"].split("\n")[0]), bullet["text"]
        if screen == "desktop":
            SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS_DIR / f"article-{slug}-first-screen-{width}.png"))


@pytest.mark.parametrize("slug", ARTICLES)
def test_the_legend_comes_first_and_every_verdict_has_a_word_and_a_mark(
    browser: Browser, site_url: str, slug: str
) -> None:
    with opened(browser, f"{site_url}articles/{slug}/", 1280, 900) as page:
        found = page.evaluate(LEGEND_AND_CELLS_JS)
    assert found is not None, "no verdict legend or table"
    assert found["legendFirst"], "the legend comes after the table"
    assert found["cells"], "the table has no verdict cells"
    for verdicts in found["cells"]:
        assert verdicts, "a verdict cell without a verdict"
        for verdict in verdicts:
            word = verdict["text"].removeprefix(verdict["mark"]).strip()
            assert MARKS.get(word) == verdict["mark"], verdict
            assert verdict["colour"] not in ("rgba(0, 0, 0, 0)", "transparent"), verdict


@pytest.mark.parametrize("slug", ARTICLES)
def test_every_toc_entry_lands_on_its_heading(browser: Browser, site_url: str, slug: str) -> None:
    with opened(browser, f"{site_url}articles/{slug}/", 1280, 900) as page:
        # The charts draw as the page loads (charts.js, before the page's other scripts); a reader's click
        # comes after, and so do the test's.
        if page.locator(FIGURE).count():
            page.wait_for_function(CHARTS_RENDERED_JS)
        anchors = page.evaluate(TOC_LINKS_JS)
        assert anchors, "the article has no table of contents"
        missed = {}
        for anchor in anchors:
            page.locator(f".md-sidebar--secondary a.md-nav__link[href$='#{anchor}']").first.click()
            landed = page.evaluate(LANDED_JS, anchor)
            # A heading near the end cannot rise to the top: the page has scrolled as far as it goes.
            if landed["atBottom"] and landed["header"] <= landed["top"] < landed["height"]:
                continue
            if abs(landed["top"] - landed["header"]) > LANDING_PX:
                missed[anchor] = round(landed["top"] - landed["header"])
        assert missed == {}, "entries landing away from their headings (px)"


# The charts across machines each article draws (their partials), by the id of their figure.
NEW_CHARTS = {
    "too-many-connections": ("tmc-latency-across",),
    "four-poolers": ("fp-head-to-head-tps", "fp-head-to-head-memory"),
    "pgbouncer-trade": ("pbt-connection-cost",),
}
# How many marks a figure's drawing holds, and the legend's symbols (Vega names each mark's group by type).
DRAWN_MARKS_JS = """
(id) => {
  const svg = document.querySelector(`#chart-${id} .connlab-chart__view svg`);
  if (!svg) return null;
  const marks = svg.querySelectorAll(
    "g.mark-symbol path, g.mark-line path, g.mark-rule line, g.mark-area path"
  );
  const box = svg.getBoundingClientRect();
  return {marks: marks.length, width: box.width, height: box.height};
}
"""
# The simulator shown: its sentence's figures, the N* its chart labels, and its sliders' printed values.
SHOWN_SIMULATOR_JS = """
() => {
  const panels = [...document.querySelectorAll(".connlab-switch__panel[data-switch='usl-sim']")];
  const shown = panels.filter(p => !p.hidden);
  if (shown.length !== 1) return {shown: shown.length};
  const panel = shown[0];
  const text = name => (panel.querySelector(`[data-sim='${name}']`) || {}).textContent || null;
  const svg = panel.querySelector(".connlab-chart__view svg");
  const texts = svg ? [...svg.querySelectorAll("text")].map(t => t.textContent) : [];
  const label = texts.find(t => t.startsWith("N*"));
  return {
    shown: 1,
    machine: panel.getAttribute("data-machine"),
    sentence: {lambda_: text("lambda_"), sigma: text("sigma"), kappa: text("kappa"), n_star: text("n_star")},
    label: label || null,
    sliders: [...panel.querySelectorAll(".vega-bind input[type=range] + span")].map(s => s.textContent),
  };
}
"""


def _wait_drawn(page: Page, chart_id: str) -> dict:
    """The drawing once it holds marks, read in the same frame (a scroll may draw a chart again)."""
    found = page.wait_for_function(
        f"() => {{ const d = ({DRAWN_MARKS_JS})({chart_id!r}); return d && d.marks > 0 ? d : null; }}"
    )
    return found.json_value()


@pytest.mark.parametrize("slug", list(NEW_CHARTS))
def test_each_chart_across_machines_is_drawn_with_marks(browser: Browser, site_url: str, slug: str) -> None:
    with opened(browser, f"{site_url}articles/{slug}/", 1280, 900) as page:
        for chart_id in NEW_CHARTS[slug]:
            figure = page.locator(f"#chart-{chart_id}")
            assert figure.count() == 1, f"no chart {chart_id}"
            figure.scroll_into_view_if_needed()
            drawn = _wait_drawn(page, chart_id)
            assert drawn["marks"] > 0 and drawn["width"] > 100 and drawn["height"] > 50, (chart_id, drawn)
            SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
            figure.screenshot(path=str(SCREENSHOTS_DIR / f"article-{slug}-chart-{chart_id}.png"))


def _shown_simulator(page: Page) -> dict:
    page.wait_for_function(
        f"() => {{ const s = ({SHOWN_SIMULATOR_JS})(); return s.label && s.sliders.length; }}"
    )
    return page.evaluate(SHOWN_SIMULATOR_JS)


def test_the_simulator_selector_changes_the_shown_optimum(browser: Browser, site_url: str) -> None:
    """The machine selector shows that machine's simulator; every figure shown once (sentence, sliders, the
    chart's N*) agrees, and choosing another machine changes the optimum shown."""
    with opened(browser, f"{site_url}articles/pool-sizing/", 1280, 900) as page:
        select = page.locator("#usl-sim-machine")
        options = select.locator("option").all_text_contents()
        assert len(options) >= 2, "the pinned results fit more than one machine"
        select.scroll_into_view_if_needed()
        # The default: the most thorough machine, first in the list, shown before anything is chosen.
        assert _shown_simulator(page)["machine"] == options[0]
        seen = {}
        for machine in options:
            select.select_option(machine)
            shown = _shown_simulator(page)
            assert shown["machine"] == machine
            sentence = shown["sentence"]
            assert shown["label"] == f"N* ≈ {sentence['n_star']}", shown
            assert shown["sliders"] == [sentence["lambda_"], sentence["sigma"], sentence["kappa"]], shown
            seen[machine] = sentence["n_star"]
            if machine == options[0]:
                SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
                page.locator(".connlab-switch__panel:not([hidden])").screenshot(
                    path=str(SCREENSHOTS_DIR / "article-pool-sizing-chart-simulator.png")
                )
        assert len(set(seen.values())) == len(seen), f"choosing a machine left the optimum as it was: {seen}"
