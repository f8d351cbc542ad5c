"""Every page of the built site as a reader sees it, on a desktop (1280 px) and on a phone (390 px).

One visit per page and width collects what the tests below judge: nothing is wider than the viewport
outside a deliberate scroll wrapper, a table that scrolls does so deliberately, every chart keeps a plot
area a reader can use (legend under the plot on a phone, axis labels apart), every check-it-yourself box
holds its script with a copy button, every chart has a text alternative taken from its caption,
and axe-core finds no serious or critical accessibility violation. A screenshot of each page's first screen
at each width goes to build/screenshots/ for review.

Needs a built site, Chromium at /usr/bin/chromium and axe-core in node_modules/ (`make setup`);
otherwise the tests are skipped.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from connlab.paths import SCREENSHOTS_DIR
from connlab.site.charts.vendor import NODE_MODULES
from support.browser import CHARTS_RENDERED_JS, FIGURE, TIMEOUT_MS, evaluate_within

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

AXE_SCRIPT = NODE_MODULES / "axe-core" / "axe.min.js"
# The pages are visited in shards, every page of a shard at every width, each shard on one worker of its
# own (pytest-xdist's loadgroup): one fixture visiting them all kept one worker busy for minutes while the
# others had nothing of this module to run.
SHARDS = 8
DESKTOP, PHONE = 1280, 390
WIDTHS = (DESKTOP, PHONE)
HEIGHT = 900
# The narrowest plot area (the rectangle inside the axes) a chart may have on a phone.
MIN_PLOT_WIDTH = 250
# axe-core impacts that fail the test; "moderate" and "minor" ones are reported by axe but not judged here.
FAILING_IMPACTS = {"serious", "critical"}

# Opens every collapsible box, so what is inside is laid out and measured.
OPEN_DETAILS_JS = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"

# Visible elements whose box reaches past the viewport's right edge, unless an ancestor clips or
# scrolls them (Material's table wrapper, a code block, the chart view): the ancestor is then checked
# instead. Off-canvas drawers sit left of the viewport and are not counted.
OVERFLOW_JS = """
() => {
  const limit = document.documentElement.clientWidth + 1;
  const clipped = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    [...el.classList].map(c => "." + c).join("");
  return [...document.body.querySelectorAll("*")]
    .filter(el => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && r.right > limit && getComputedStyle(el).visibility !== "hidden";
    })
    .filter(el => !clipped(el))
    .map(el => `${name(el)} (right edge ${Math.round(el.getBoundingClientRect().right)} px)`);
}
"""

# Tables that scroll inside Material's wrapper, and what makes that scrolling deliberate: the wrapper
# takes the keyboard focus and is a named region, and the first column (which names the row) sticks. A
# wrapper out of view is not laid out (connlab.css: content-visibility): each is brought into view first,
# as a reader scrolls to it, and judged once the browser has laid it out.
SCROLLING_TABLES_JS = """
async () => {
  // Two frames, or five seconds where no frame comes (a page out of sight gets none).
  const frames = () => new Promise(r => {
    requestAnimationFrame(() => requestAnimationFrame(r));
    setTimeout(r, 5000);
  });
  const found = [];
  for (const w of document.querySelectorAll(".md-typeset__scrollwrap")) {
    w.scrollIntoView({block: "nearest"});
    await frames();
    if (w.scrollWidth <= w.clientWidth + 1) continue;
    const heads = [...w.querySelectorAll("th")].slice(0, 3).map(th => th.textContent.trim());
    const first = w.querySelector("tr > :first-child");
    found.push({
      table: `${heads.join(" | ")}... (${w.scrollWidth} px in ${w.clientWidth} px)`,
      tabindex: w.getAttribute("tabindex"),
      role: w.getAttribute("role"),
      name: w.getAttribute("aria-label") || "",
      firstColumn: first ? getComputedStyle(first).position : null,
    });
  }
  window.scrollTo(0, 0);
  return found;
}
"""

# Per chart: the plot area (the root group's background, inside the axes), the legends, each axis's
# visible labels, and the accessible name of the drawing.
CHARTS_JS = """
() => [...document.querySelectorAll("figure.connlab-chart")]
  .filter(f => f.offsetParent !== null)
  .map(f => {
    const box = (el) => { const r = el.getBoundingClientRect();
      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width}; };
    const svg = f.querySelector(".connlab-chart__view svg");
    const plot = svg.querySelector(".role-frame.root > g > path.background");
    const axes = [...svg.querySelectorAll("g.role-axis")].map(axis =>
      [...axis.querySelectorAll(".role-axis-label text")]
        .filter(t => t.getAttribute("opacity") !== "0" && t.textContent.trim() !== "")
        .map(t => ({text: t.textContent, ...box(t)})));
    return {
      id: f.id,
      caption: (f.querySelector("figcaption")?.textContent || "").trim(),
      plot: plot ? box(plot) : null,
      legends: [...svg.querySelectorAll("g.role-legend")].map(box),
      legendTexts: [...svg.querySelectorAll("g.role-legend text")].map(t => t.textContent),
      axes: axes,
    };
  })
"""

# Every check-it-yourself box: its code blocks, its copy buttons.
BOXES_JS = """
() => [...document.querySelectorAll("details")]
  .filter(d => (d.querySelector("summary")?.textContent || "").startsWith("Check it yourself"))
  .map(d => ({
    title: d.querySelector("summary").textContent.trim(),
    codes: d.querySelectorAll("pre > code").length,
    copyButtons: d.querySelectorAll("button.md-code__button[data-md-type=copy]").length,
  }))
"""

# Runs the injected axe-core over the page; only violations, with the elements they concern.
AXE_RUN_JS = """
async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ")),
  }));
}
"""


@dataclass(frozen=True)
class PageView:
    """One page at one width, as the tests judge it."""

    url: str
    width: int
    overflowing: list[str]
    scrolling_tables: list[dict[str, Any]]
    charts: list[dict[str, Any]]
    named_by_caption: dict[str, int]  # figure id -> images in it named by its caption
    boxes: list[dict[str, Any]]
    violations: list[dict[str, Any]]
    screenshot: Path


def page_urls(site: Path) -> list[str]:
    """Every page of the built site, relative to its root ("", "machines/", ...)."""
    urls = [
        html.relative_to(site).as_posix().removesuffix("index.html")
        for html in sorted(site.rglob("index.html"))
    ]
    assert len(urls) > 1, f"only {urls} in {site}; the tests would be vacuous"
    return urls


def screenshot_path(url: str, width: int) -> Path:
    name = url.strip("/").replace("/", "--") or "index"
    return SCREENSHOTS_DIR / f"{name}-{width}.png"


def charts_named_by_caption(page: Page) -> dict[str, int]:
    """Per chart, how many images inside it have the caption as their accessible name, as Chromium
    computes it for assistive technology (one is right: the drawing)."""
    named = {}
    for figure_id, caption in page.locator(FIGURE).evaluate_all(
        "fs => fs.map(f => [f.id, (f.querySelector('figcaption')?.textContent || '').trim()])"
    ):
        images = page.locator(f"#{figure_id}").get_by_role("img", name=caption, exact=True)
        named[figure_id] = images.count() if caption else 0
    return named


def visit_once(chromium: Browser, url: str, width: int) -> PageView:
    context = chromium.new_context(viewport={"width": width, "height": HEIGHT}, service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url, wait_until="load")
        if page.locator(FIGURE).count():
            page.wait_for_function(CHARTS_RENDERED_JS)
        path = screenshot_path(url.split("/", 3)[3], width)
        path.parent.mkdir(parents=True, exist_ok=True)
        # The first screen, as a reader meets the page (the whole of a long page with every box open is an
        # image tens of thousands of pixels tall).
        page.screenshot(path=str(path))
        page.evaluate(OPEN_DETAILS_JS)
        page.wait_for_timeout(200)  # let a re-layout after opening the boxes settle
        page.add_script_tag(path=str(AXE_SCRIPT))
        overflowing = page.evaluate(OVERFLOW_JS)
        charts = page.evaluate(CHARTS_JS)
        named_by_caption = charts_named_by_caption(page)
        boxes = page.evaluate(BOXES_JS)
        violations = evaluate_within(page, AXE_RUN_JS, timeout_ms=120_000)  # its bound before f8126a5
        # Last: it scrolls through the page, and Material's header fades its title in and out meanwhile.
        scrolling_tables = evaluate_within(page, SCROLLING_TABLES_JS)
        return PageView(
            url=url,
            width=width,
            overflowing=overflowing,
            scrolling_tables=scrolling_tables,
            charts=charts,
            named_by_caption=named_by_caption,
            boxes=boxes,
            violations=violations,
            screenshot=path,
        )
    finally:
        context.close()


@pytest.fixture(
    scope="module",
    params=[pytest.param(n, marks=pytest.mark.xdist_group(f"site-pages-{n}")) for n in range(SHARDS)],
    ids=[f"shard{n}" for n in range(SHARDS)],
)
def views(
    request: pytest.FixtureRequest, browser: Browser, built_site: Path, site_url: str
) -> Iterator[list[PageView]]:
    """The visits of one shard (shards_of_visits): pages at each width."""
    if not AXE_SCRIPT.is_file():
        pytest.skip(f"{AXE_SCRIPT} is missing: run make setup (npm ci)")
    shard = shards_of_visits(built_site)[request.param]
    yield [visit(browser, site_url + url, width) for url, width in shard]


def visit(chromium: Browser, url: str, width: int) -> PageView:
    """One visit, made again in a fresh context (a renderer of its own) if the first one's page stalled:
    on a busy machine a renderer once stopped running the page's scripts and timers altogether. A page that
    stalls twice fails the test, naming it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return visit_once(chromium, url, width)
    except PlaywrightTimeout:
        try:
            return visit_once(chromium, url, width)
        except PlaywrightTimeout as exc:
            raise AssertionError(f"{url} at {width} px stalled twice: {exc}") from exc


def shards_of_visits(site: Path) -> list[list[tuple[str, int]]]:
    """Every page at every width, dealt into SHARDS shards of about equal HTML: the heaviest visit first, each
    to the shard with the least so far. A visit's time follows its page's size (its charts and tables), and
    each shard's visits are one fixture's setup on one worker, so the heaviest shard sets how long the
    module takes; dealing every SHARDS-th page by name put two heavy pages in one shard."""
    sizes = {url: (site / url / "index.html").stat().st_size for url in page_urls(site)}
    visits = sorted(((url, width) for url in sizes for width in WIDTHS), key=lambda v: (-sizes[v[0]], v))
    shards: list[list[tuple[str, int]]] = [[] for _ in range(SHARDS)]
    loads = [0] * SHARDS
    for url, width in visits:
        lightest = loads.index(min(loads))
        shards[lightest].append((url, width))
        loads[lightest] += sizes[url]
    return shards


# What a page's HTML holds before any script runs: the charts and boxes its view must have found.
CHART_FIGURE = re.compile(r'<figure [^>]*class="[^"]*\bconnlab-chart\b')
BOX_SUMMARY = re.compile(r"<summary>Check it yourself")


def test_the_site_has_charts_and_boxes_to_judge(built_site: Path) -> None:
    """The checks below judge what they find: a site with none would pass them all."""
    pages = [(built_site / url / "index.html").read_text(encoding="utf-8") for url in page_urls(built_site)]
    assert sum(bool(CHART_FIGURE.search(page)) for page in pages) >= 2, "fewer than two pages with charts"
    assert any(BOX_SUMMARY.search(page) for page in pages), "no check-it-yourself box on any page"


def test_each_view_found_the_charts_and_boxes_its_page_holds(views: list[PageView], built_site: Path) -> None:
    """A selector that no longer matched would leave the checks below nothing to judge."""
    found = {}
    for view in views:
        page = (built_site / view.url.split("/", 3)[3] / "index.html").read_text(encoding="utf-8")
        charts, boxes = bool(CHART_FIGURE.search(page)), len(BOX_SUMMARY.findall(page))
        if bool(view.charts) != charts or len(view.boxes) != boxes:
            found[f"{view.url} at {view.width} px"] = {
                "charts in the HTML": charts, "charts found": len(view.charts),
                "boxes in the HTML": boxes, "boxes found": len(view.boxes),
            }  # fmt: skip
    assert not found, report(found)


def report(found: dict[str, Any]) -> str:
    return json.dumps(found, indent=1, ensure_ascii=False)


# --------------------------------------------------------------------------- layout


def test_screenshots_are_written(views: list[PageView]) -> None:
    for view in views:
        assert view.screenshot.stat().st_size > 0, view.screenshot


def test_nothing_is_wider_than_the_viewport(views: list[PageView]) -> None:
    found = {f"{view.url} at {view.width} px": view.overflowing for view in views if view.overflowing}
    assert not found, "wider than the viewport, outside a scroll wrapper:\n" + report(found)


def test_tables_that_scroll_do_so_deliberately(views: list[PageView]) -> None:
    """A table wider than the column even with its cells wrapped scrolls in a wrapper a keyboard can
    reach and a screen reader names, with its first column kept in view."""
    found = {
        f"{view.url} at {view.width} px": table
        for view in views
        for table in view.scrolling_tables
        if (table["tabindex"], table["role"], table["firstColumn"]) != ("0", "region", "sticky")
        or not table["name"]
    }
    assert not found, "tables that scroll without a deliberate wrapper:\n" + report(found)


def test_charts_keep_a_usable_plot_on_a_phone(views: list[PageView]) -> None:
    charts = [(view.url, chart) for view in views if view.width == PHONE for chart in view.charts]
    narrow = {
        f"{url} {chart['id']}": round(chart["plot"]["width"]) if chart["plot"] else None
        for url, chart in charts
        if not chart["plot"] or chart["plot"]["width"] < MIN_PLOT_WIDTH
    }
    assert not narrow, f"plot areas narrower than {MIN_PLOT_WIDTH} px at {PHONE} px:\n" + report(narrow)


def test_legends_sit_below_the_plot_on_a_phone(views: list[PageView]) -> None:
    found = {
        f"{view.url} {chart['id']}": "legend beside the plot"
        for view in views
        if view.width == PHONE
        for chart in view.charts
        if chart["plot"] and any(legend["top"] < chart["plot"]["bottom"] for legend in chart["legends"])
    }
    assert not found, report(found)


def overlapping(labels: list[dict[str, Any]]) -> list[str]:
    """Pairs of axis labels whose boxes intersect (a pixel of slack for anti-aliasing)."""
    pairs = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            apart = (
                a["right"] <= b["left"] + 1
                or b["right"] <= a["left"] + 1
                or a["bottom"] <= b["top"] + 1
                or b["bottom"] <= a["top"] + 1
            )
            if not apart:
                pairs.append(f"{a['text']!r} / {b['text']!r}")
    return pairs


def test_axis_labels_do_not_collide(views: list[PageView]) -> None:
    found = {
        f"{view.url} at {view.width} px {chart['id']}": pairs
        for view in views
        for chart in view.charts
        if (pairs := [pair for axis in chart["axes"] for pair in overlapping(axis)])
    }
    assert not found, "axis labels drawn over each other:\n" + report(found)


def test_legends_speak_in_words(views: list[PageView]) -> None:
    """A legend shows what a reader can read, never a field's raw value such as true or false."""
    raw = {"true", "false", "null", "undefined", "NaN"}
    found = {
        f"{view.url} {chart['id']}": sorted(raw & set(chart["legendTexts"]))
        for view in views
        for chart in view.charts
        if raw & set(chart["legendTexts"])
    }
    assert not found, report(found)


# --------------------------------------------------------------------------- check-it-yourself boxes


def test_every_box_holds_one_script_with_a_copy_button(views: list[PageView]) -> None:
    boxes = [(view, box) for view in views for box in view.boxes]
    broken = {
        f"{view.url} at {view.width} px: {box['title']}": box
        for view, box in boxes
        if box["codes"] != 1 or box["copyButtons"] != 1
    }
    assert not broken, report(broken)


# --------------------------------------------------------------------------- accessibility


def test_no_serious_or_critical_accessibility_violations(views: list[PageView]) -> None:
    found = {
        f"{view.url} at {view.width} px": failing
        for view in views
        if (failing := [v for v in view.violations if v["impact"] in FAILING_IMPACTS])
    }
    assert not found, "axe-core:\n" + report(found)


def test_every_chart_is_named_by_its_caption(views: list[PageView]) -> None:
    charts = [(view, chart) for view in views for chart in view.charts]
    found = {
        f"{view.url} at {view.width} px {chart['id']}": chart["caption"]
        for view, chart in charts
        if view.named_by_caption.get(chart["id"]) != 1
    }
    assert not found, "charts without one image named by their caption:\n" + report(found)


# --------------------------------------------------------------------------- a change of width

# Whether a chart's legends all sit under its plot.
LEGENDS_BELOW_JS = """
(f) => {
  const plot = f.querySelector(".connlab-chart__view svg .role-frame.root > g > path.background");
  const legends = [...f.querySelectorAll(".connlab-chart__view svg g.role-legend")];
  const bottom = plot ? plot.getBoundingClientRect().bottom : 0;
  return Boolean(plot) && legends.every(l => l.getBoundingClientRect().top >= bottom);
}
"""


def wait_for_legends(page: Page, below: bool) -> None:
    """Every shown chart with a legend, brought into view as a reader scrolls to it, has its legends under
    its plot (below) or beside it. A chart out of view is drawn again for a new width once it comes near
    the view (connlab.css: content-visibility), not at once."""
    figures = page.locator(FIGURE)
    shown = [
        figure
        for figure in (figures.nth(index) for index in range(figures.count()))
        if figure.is_visible() and figure.locator(".connlab-chart__view svg g.role-legend").count() > 0
    ]
    assert shown, f"no chart with a legend on {page.url}"
    for figure in shown:
        figure.scroll_into_view_if_needed()
        page.wait_for_function(
            f"(f) => ({LEGENDS_BELOW_JS})(f) === {'true' if below else 'false'}", arg=figure.element_handle()
        )


RESIZED_PAGE = "articles/too-many-connections/"


@contextlib.contextmanager
def page_with_charts_drawn(browser: Browser, url: str, width: int) -> Iterator[Page]:
    """The page at url in a fresh context of that width, once its charts are drawn."""
    context = browser.new_context(viewport={"width": width, "height": HEIGHT}, service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url, wait_until="load")
        page.wait_for_function(CHARTS_RENDERED_JS)
        yield page
    finally:
        context.close()


def test_charts_follow_a_change_of_width(browser: Browser, site_url: str) -> None:
    """A window narrowed from a desktop to a phone's width (or a phone turned) draws the charts again
    with their legends under the plot, and widened again, beside it."""
    with page_with_charts_drawn(browser, site_url + RESIZED_PAGE, DESKTOP) as page:
        assert page.locator(f"{FIGURE} .connlab-chart__view svg g.role-legend").count() > 0, "no legend"
        wait_for_legends(page, below=False)
        page.set_viewport_size({"width": PHONE, "height": HEIGHT})
        wait_for_legends(page, below=True)
        page.set_viewport_size({"width": DESKTOP, "height": HEIGHT})
        wait_for_legends(page, below=False)


def test_the_machines_tables_fit_a_desktop_column(views: list[PageView]) -> None:
    """The Machines page is read on a desktop to compare machines: none of its tables scrolls at 1280 px."""
    machines = [view for view in views if view.url.endswith("/machines/") and view.width == DESKTOP]
    if not machines:
        pytest.skip("the Machines page is in another shard")
    assert [table for view in machines for table in view.scrolling_tables] == []


LAID_OUT_JS = "(w) => w.firstElementChild.checkVisibility({contentVisibilityAuto: true})"
# Two frames, or five seconds where no frame comes (SCROLLING_TABLES_JS says why).
TWO_FRAMES_JS = """
() => new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 5000); })
"""
# A machine's own page: some eighteen tables, most of them out of view when it opens.
MANY_TABLES_PAGE = "machines/amd-epyc-2c-24g/"
# A table's wrapper as accessibility.js left it, and whether the browser has laid it out.
WRAPPER_STATE_JS = """
(w) => ({
  laidOut: w.firstElementChild.checkVisibility({contentVisibilityAuto: true}),
  scrolls: w.scrollWidth > w.clientWidth + 1,
  focused: document.activeElement === w,
  tabindex: w.getAttribute("tabindex"),
  role: w.getAttribute("role"),
  name: w.getAttribute("aria-label"),
})
"""


# The tables of a page after Material's script ran: the scroll wrappers, the tables the build wrapped in them
# (connlab.site.render.wrapped_tables), wrappers inside wrappers, and tables Material would style or wrap
# itself.
TABLE_WRAPPERS_JS = """
() => [".md-typeset__scrollwrap", ".md-typeset__scrollwrap > .md-typeset__table > table.connlab-table",
  ".md-typeset__scrollwrap .md-typeset__scrollwrap", ".md-typeset table:not([class])"]
  .map(selector => document.querySelectorAll(selector).length)
"""


def test_material_leaves_each_table_in_the_wrapper_the_build_wrote(
    browser: Browser,
    site_url: str,
    built_site: Path,
) -> None:
    """The build writes every table in Material's scroll wrappers, so that a wrapper out of view skips from
    the page's first layout on: Material's script wraps none again, and every wrapper holds its table."""
    html = (built_site / MANY_TABLES_PAGE / "index.html").read_text(encoding="utf-8")
    written = html.count('<div class="md-typeset__scrollwrap">')
    with page_with_charts_drawn(browser, site_url + MANY_TABLES_PAGE, DESKTOP) as page:
        wrappers, wrapped, nested, classless = page.evaluate(TABLE_WRAPPERS_JS)
    assert written > 15, f"{written} tables written in wrappers on /{MANY_TABLES_PAGE}"
    assert (wrappers, wrapped, nested, classless) == (written, written, 0, 0)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_table_out_of_view_is_reachable_by_keyboard_until_it_is_measured(
    browser: Browser,
    site_url: str,
    width: int,
) -> None:
    """A table out of view is not laid out when the page opens, so whether it scrolls is not known: its
    wrapper takes the focus meanwhile. Focused, it comes into view and is measured; it keeps the focus, and
    keeps its tab stop after losing it only where it scrolls."""
    with page_with_charts_drawn(browser, site_url + MANY_TABLES_PAGE, width) as page:
        last = page.locator(".md-typeset__scrollwrap").last
        before = last.evaluate(WRAPPER_STATE_JS)
        assert not before["laidOut"], "the page's last table was laid out before it came near the view"
        assert (before["tabindex"], before["role"], before["name"]) == ("0", "region", "Table"), before
        last.focus()
        page.wait_for_function(LAID_OUT_JS, arg=last.element_handle())
        page.evaluate(TWO_FRAMES_JS)
        measured = last.evaluate(WRAPPER_STATE_JS)
        assert measured["focused"], "the table lost the focus when it was measured"
        # One that scrolls is named so at once; one that does not keeps its tab stop while it has the focus.
        name = "Table, scrolls sideways" if measured["scrolls"] else "Table"
        assert (measured["tabindex"], measured["role"], measured["name"]) == ("0", "region", name), measured
        page.keyboard.press("Tab")
        after = last.evaluate(WRAPPER_STATE_JS)
        assert not after["focused"]
        if after["scrolls"]:
            assert (after["tabindex"], after["role"], after["name"]) == (
                "0",
                "region",
                "Table, scrolls sideways",
            )
        else:
            assert (after["tabindex"], after["role"], after["name"]) == (None, None, None), after


# Narrower than a phone held upright: the machine page's charts keep their minimum plot width and scroll.
NARROWEST = 320
# Per chart on the page: whether its view scrolls sideways, measured here, and whether it takes the focus.
CHART_VIEWS_JS = """
() => [...document.querySelectorAll("figure.connlab-chart .connlab-chart__view")].map(v => ({
  id: v.closest("figure").id,
  scrolls: v.scrollWidth > v.clientWidth + 1,
  tabindex: v.getAttribute("tabindex"),
}))
"""


@pytest.mark.parametrize("width", (NARROWEST, PHONE, DESKTOP))
def test_a_chart_view_that_scrolls_takes_the_keyboard_and_one_that_fits_does_not(
    browser: Browser,
    site_url: str,
    width: int,
) -> None:
    """charts.js tells whether a view scrolls from its drawing's width and its column's, without laying the
    page out after every chart: each chart's view, measured here in full, agrees, out of view too."""
    with page_with_charts_drawn(browser, site_url + MANY_TABLES_PAGE, width) as page:
        views = page.evaluate(CHART_VIEWS_JS)
    assert len(views) > 5, views
    wrong = [v for v in views if (v["tabindex"] == "0") != v["scrolls"]]
    assert not wrong, report({"width": width, "wrong": wrong})
    if width == NARROWEST:
        assert all(v["scrolls"] for v in views), report(views)
    if width == DESKTOP:
        assert not any(v["scrolls"] for v in views), report(views)
