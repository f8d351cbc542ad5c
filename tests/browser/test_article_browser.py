"""Drive Chromium against each built article as a reader would: the short answer, with a measured number, is
on the first screen at desktop and phone sizes; the verdict legend comes before the table and every verdict
cell has a word and a mark; every table-of-contents entry lands on its heading.

The site is built from the pinned results (conftest's `built_site`, or CONNLAB_SITE_DIR); the first screen
of each article at 1280 px is saved in build/screenshots/ for review. Skipped without Chromium.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from connlab.data.chart_rows import LINES_UP_TO, SEED_POINT, median_label
from connlab.paths import SCREENSHOTS_DIR
from connlab.site.charts.colours import kind_in
from connlab.site.charts.constants import POOLER_COLOURS
from support.browser import CHARTS_RENDERED_JS, FIGURE, serving
from support.built_site import build_site
from support.paths import PINNED_RESULTS, REPO_ROOT

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
  const advice = document.querySelector("#what-to-do");
  if (!item) return null;
  const box = item.getBoundingClientRect();
  const follows = advice && (advice.compareDocumentPosition(item) & Node.DOCUMENT_POSITION_FOLLOWING);
  return {top: box.top, bottom: box.bottom, text: item.innerText, height: window.innerHeight,
          afterAdvice: Boolean(follows)};
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


@pytest.mark.parametrize("slug", ARTICLES)
def test_the_audit_of_the_source_article_follows_what_to_do_with_a_number(
    browser: Browser, site_url: str, slug: str
) -> None:
    """What to do opens the page (tests/browser/test_what_to_do_browser.py holds it to the first screen); the
    short answer, which audits the source article, comes second and still leads with a measured figure."""
    with opened(browser, f"{site_url}articles/{slug}/", *SCREENS["desktop"]) as page:
        bullet = page.evaluate(FIRST_BULLET_JS)
    assert bullet is not None, "the article has no short answer"
    assert bullet["afterAdvice"], "the short answer is not after What to do"
    assert re.search(r"\d", bullet["text"].split("\n")[0]), bullet["text"]


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
    "four-poolers": (
        "fp-versions-memory",
        "fp-versions-tps",
        "fp-head-to-head-tps",
        "fp-head-to-head-memory",
    ),
    "pgbouncer-trade": ("pbt-pooled-vs-direct", "pbt-connection-cost"),
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


# -- the dot charts on a phone, the poolers' colours, the seed's figures ----------------------------------

# The charts drawn as dots with ranges, whose category labels (machine and clients) once made them wider
# than a phone's column.
DOT_CHARTS = {"four-poolers": ("fp-head-to-head-tps", "fp-head-to-head-memory"),
              "pgbouncer-trade": ("pbt-connection-cost",)}  # fmt: skip
# The drawing's width against its view's, whether the view was made a scroll stop (charts.js gives a view
# wider than its column a tabindex), and each legend's entries: label and the symbol's fill.
FIT_AND_LEGEND_JS = r"""
(id) => {
  const view = document.querySelector(`#chart-${id} .connlab-chart__view`);
  const svg = view && view.querySelector("svg");
  if (!svg) return null;
  const legends = [...svg.querySelectorAll("g.role-legend")].map(legend => {
    const labels = [...legend.querySelectorAll("g.role-legend-label text")].map(t => t.textContent);
    // A line's legend mark may be a stroke alone: its colour is then the stroke's.
    const colour = p => [p.getAttribute("fill"), p.getAttribute("stroke")]
      .find(c => /^#[0-9a-f]{6}$/i.test(c || ""));
    const fills = [...legend.querySelectorAll("g.role-legend-symbol path")].map(colour);
    return labels.map((label, i) => [label, fills[i]]);
  });
  // A label on several lines is a text of tspans, one per line: read as one line.
  const axisLabels = [...svg.querySelectorAll("g.role-axis-label text")].map(t => {
    const lines = [...t.querySelectorAll("tspan")].map(line => line.textContent);
    return lines.length ? lines.join(" ") : t.textContent;
  });
  const diamonds = [...svg.querySelectorAll("g.mark-symbol path")]
    .filter(p => /^M-[\d.]+,0L0,-/.test(p.getAttribute("d") || "")).length;
  return {drawn: svg.getBoundingClientRect().width, column: view.clientWidth,
          scrolls: view.hasAttribute("tabindex"), legends, axisLabels, diamonds};
}
"""


def _fit_and_legend(page: Page, chart_id: str) -> dict:
    page.locator(f"#chart-{chart_id}").scroll_into_view_if_needed()
    _wait_drawn(page, chart_id)
    return page.evaluate(FIT_AND_LEGEND_JS, chart_id)


@pytest.mark.parametrize("slug", list(DOT_CHARTS))
def test_the_dot_charts_fit_a_phones_column(browser: Browser, site_url: str, slug: str) -> None:
    width, height = SCREENS["phone"]
    with opened(browser, f"{site_url}articles/{slug}/", width, height) as page:
        for chart_id in DOT_CHARTS[slug]:
            found = _fit_and_legend(page, chart_id)
            assert found["drawn"] <= found["column"] + 1 and not found["scrolls"], (chart_id, found)
            SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
            page.locator(f"#chart-{chart_id}").screenshot(
                path=str(SCREENSHOTS_DIR / f"article-{slug}-chart-{chart_id}-{width}.png")
            )


# The charts that answer an article's question, under its "What to do": PgBouncer's trade pooled against
# direct by clients per core; Four poolers' memory and throughput by version, side by side where the column
# is wide and one above the other on a phone (Material's grid).
ANSWER_CHARTS = {
    "pgbouncer-trade": ("pbt-pooled-vs-direct",),
    "four-poolers": ("fp-versions-memory", "fp-versions-tps"),
}
SIDE_BY_SIDE = ANSWER_CHARTS["four-poolers"]
# Whether What to do comes before the figure, and the figure before the short answer (the audit).
ANSWER_ORDER_JS = """
(id) => {
  const figure = document.querySelector(`#chart-${id}`);
  const advice = document.querySelector("#what-to-do"), audit = document.querySelector(".short-answer");
  const after = (a, b) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
  return [after(advice, figure), after(figure, audit)];
}
"""
# Each figure's box, read in one frame.
BOXES_JS = """
(ids) => ids.map(id => {
  const box = document.querySelector(`#chart-${id}`).getBoundingClientRect();
  return {left: box.left, top: box.top, right: box.right, bottom: box.bottom};
})
"""


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_answers_charts_are_drawn_in_the_column_after_what_to_do(
    browser: Browser, site_url: str, screen: str
) -> None:
    width, height = SCREENS[screen]
    for slug, chart_ids in ANSWER_CHARTS.items():
        with opened(browser, f"{site_url}articles/{slug}/", width, height) as page:
            for chart_id in chart_ids:
                found = _fit_and_legend(page, chart_id)
                assert found["drawn"] <= found["column"] + 1 and not found["scrolls"], (chart_id, found)
                # The answer's chart follows What to do and comes before the audit of the source article.
                order = page.evaluate(ANSWER_ORDER_JS, chart_id)
                assert order == [True, True], chart_id
                SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
                page.locator(f"#chart-{chart_id}").screenshot(
                    path=str(SCREENSHOTS_DIR / f"article-{slug}-chart-{chart_id}-{width}.png")
                )
            if slug != "four-poolers":
                continue
            first, second = page.evaluate(BOXES_JS, list(SIDE_BY_SIDE))
            if screen == "desktop":  # side by side: one row, the second to the right of the first
                assert abs(first["top"] - second["top"]) < 2 and second["left"] >= first["right"] - 1, (
                    first, second,
                )  # fmt: skip
            else:  # one above the other in the phone's column
                assert second["top"] >= first["bottom"] - 1 and abs(second["left"] - first["left"]) < 2, (
                    first, second,
                )  # fmt: skip


# Every chart that sets poolers (or a pooler and the direct path) side by side, by the page that draws it;
# the per-machine ones on the pinned machines' pages.
POOLER_CHARTS = {
    "articles/four-poolers/": DOT_CHARTS["four-poolers"],
    "articles/pgbouncer-trade/": DOT_CHARTS["pgbouncer-trade"],
    "machines/amd-epyc-2c-24g/": ("tmc-amd-epyc-2c-24g-pooler",),
    "machines/amd-epyc-2c-24g-2/": ("pbt-amd-epyc-2c-24g-2-churn", "fp-amd-epyc-2c-24g-2-sustained"),
}
# The seed's connection-cost figures (results/published-pgbouncer-tradeoffs: pooler-churn tps, direct and
# through PgBouncer at 16 and 64 clients), read from the pinned published set.
SEED_PATHS = [
    row
    for row in csv.DictReader(
        (PINNED_RESULTS / "published-pgbouncer-tradeoffs" / "published.csv").open(encoding="utf-8")
    )
    if (row["experiment"], row["metric"]) == ("pooler-churn", "tps")
]
# The connection-cost chart's paths by the pooler kind each is drawn in (connlab.data.chart_rows).
PATH_KINDS = {"straight to the server": "direct", "through PgBouncer": "pgbouncer"}


def test_a_pooler_has_one_colour_on_every_chart(browser: Browser, site_url: str) -> None:
    """Each colour legend's entry is drawn in the colour constants.json gives its pooler kind (or "direct"),
    whichever chart, page and other poolers it shares: PgBouncer is one colour everywhere."""
    seen: dict[str, set[str]] = {}
    for path, chart_ids in POOLER_CHARTS.items():
        with opened(browser, f"{site_url}{path}", 1280, 900) as page:
            for chart_id in chart_ids:
                for label, fill in _fit_and_legend(page, chart_id)["legends"][0]:
                    kind = PATH_KINDS.get(label) or kind_in(label.split(", ")[0])
                    seen.setdefault(kind, set()).add(fill)
                SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
                page.locator(f"#chart-{chart_id}").screenshot(
                    path=str(SCREENSHOTS_DIR / f"pooler-colours-chart-{chart_id}.png")
                )
    assert {"pgbouncer", "pgpool", "direct"} <= set(seen), seen
    assert {kind: fills for kind, fills in seen.items() if fills != {POOLER_COLOURS[kind]}} == {}


def test_the_connection_cost_chart_draws_the_seeds_figures_beside_the_measured(
    browser: Browser, site_url: str
) -> None:
    with opened(browser, f"{site_url}articles/pgbouncer-trade/", 1280, 900) as page:
        found = _fit_and_legend(page, "pbt-connection-cost")
        assert any(label.startswith(SEED_POINT) for label in found["axisLabels"]), found["axisLabels"]
        # The seed's figures as diamonds, one per path and client count it printed; the measured are dots.
        assert found["diamonds"] == len(SEED_PATHS), found
        assert len(found["legends"]) == 1  # the axis names the seed's rows: no second legend
        SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
        page.locator("#chart-pbt-connection-cost").screenshot(
            path=str(SCREENSHOTS_DIR / "article-pgbouncer-trade-chart-pbt-connection-cost-with-seed.png")
        )


# -- the latency chart past a handful of machines ------------------------------------------------------------

# The pinned machine copied under other ids: it ran the clients sweep alone, so the copies add latency
# curves and little else to aggregate.
COPIED_MACHINE = "intel-xeon-16c-126g"
LATENCY_CHART = "tmc-latency-across"
# The bands drawn (an area with a shape, not an empty path) and the legend's labels.
BAND_JS = """
(id) => {
  const svg = document.querySelector(`#chart-${id} .connlab-chart__view svg`);
  const areas = [...svg.querySelectorAll("g.mark-area path")]
    .filter(p => (p.getAttribute("d") || "").length > 10);
  const labels = [...svg.querySelectorAll("g.role-legend-label text")].map(t => t.textContent);
  return {areas: areas.length, labels};
}
"""


def _many_machines_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "many_machines", REPO_ROOT / "scripts" / "bench" / "many_machines.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.mkdocs
def test_past_a_handful_of_machines_the_latency_chart_draws_their_band(
    browser: Browser, shared_tmp: Path
) -> None:
    """More than LINES_UP_TO machines with latency: the chart draws the machines' median with a band from
    the lowest to the highest (scripts/bench/many_machines.py copies the pinned machine, throughput scaled,
    under new ids, as it does to measure the site's growth)."""
    results = shared_tmp / "results"
    # The pinned machines' clients sweeps alone, where the latency comes from: the rest of the pinned results
    # would add nothing to this chart and time to the build.
    with_latency = {"amd-epyc-2c-24g", "intel-xeon-2c-24g", COPIED_MACHINE}
    for machine in with_latency:
        shutil.copytree(PINNED_RESULTS / machine / "clients-sweep", results / machine / "clients-sweep")
        shutil.copy2(PINNED_RESULTS / machine / "machine.yaml", results / machine / "machine.yaml")
    add_machine = _many_machines_module().add_machine
    copies = LINES_UP_TO + 1 - len(with_latency)
    for index in range(copies):
        add_machine(results, index, COPIED_MACHINE)
    machines = len(with_latency) + copies
    site = build_site(results, shared_tmp / "build")
    with serving(site) as url, opened(browser, f"{url}articles/too-many-connections/", 1280, 900) as page:
        figure = page.locator(f"#chart-{LATENCY_CHART}")
        figure.scroll_into_view_if_needed()
        _wait_drawn(page, LATENCY_CHART)
        band = page.evaluate(BAND_JS, LATENCY_CHART)
        # One series, the machines' median (its legend label may end in an ellipsis past its limit).
        median = median_label(machines).split(" (")[0]
        assert [label for label in band["labels"] if label.startswith(median)] != [], band["labels"]
        assert not {f"synthetic-{i:04d}" for i in range(copies)} & set(band["labels"])  # no line per machine
        assert band["areas"] >= 1, band  # the band from the lowest machine to the highest is drawn
        text = page.locator("article").inner_text()
        assert f"With {machines} measured machines" in text
        SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
        figure.screenshot(
            path=str(SCREENSHOTS_DIR / f"article-too-many-connections-chart-{LATENCY_CHART}-band.png")
        )
