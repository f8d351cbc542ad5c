"""Drive Chromium against the built site: charts render (also under a strict
Content-Security-Policy), follow the palette, survive Material's instant navigation, the
USL simulator follows its sliders, and nothing is requested from another host.

The site is built from the pinned results once per test run (conftest's `built_site`; CONNLAB_SITE_DIR
points at another built site); the tests are skipped without Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
import yaml

from connlab.site.charts.html import chart_block
from connlab.site.charts.kinds import usl_simulator
from support.browser import (
    CHARTS_RENDERED_JS,
    FIGURE,
    LOCAL_HOSTS,
    PAGE_SCRIPTS_RAN_JS,
    TIMEOUT_MS,
    Watched,
    serving,
    wait_for_charts,
)
from support.built_site import build_site

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

    from support.rows import RunWriter

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


# --------------------------------------------------------------------------- pages

# Material's palette form: one radio input per palette entry (__palette_0 = default,
# __palette_1 = slate) and, after each input, a label for the *next* one; only the
# label of the next scheme is visible, so it is the toggle button.
PALETTE_TOGGLE = 'form[data-md-component="palette"] label[for="__palette_{index}"]'
# The article ARTICLE_NAV_LINK leads to; its charts are across machines.
ARTICLE_PAGE = "articles/too-many-connections/"
ARTICLE_NAV_LINK = '.md-sidebar--primary a.md-nav__link[href*="articles/too-many-connections/"]'


@dataclass(frozen=True)
class ChartPage:
    url: str  # relative to the site root, as use_directory_urls serves it ("", "methodology/")
    figures: int  # chart figures in the built HTML
    browser_only: int  # of them, drawn in the browser only (a machine's page): no SVG fallback


@pytest.fixture(scope="session")
def chart_pages(built_site: Path) -> list[ChartPage]:
    """Every page of the built site that contains a chart."""
    pages = []
    for html in sorted(built_site.rglob("*.html")):
        text = html.read_text(encoding="utf-8")
        figures = text.count('<figure class="connlab-chart')
        if figures:
            url = html.relative_to(built_site).as_posix().removesuffix("index.html")
            pages.append(ChartPage(url, figures, text.count("connlab-chart--browser-only")))
    assert pages, f"no page in {built_site} contains a connlab-chart figure; the test would be vacuous"
    assert any(page.browser_only for page in pages), "no machine page with charts: the test would miss them"
    return pages


# --------------------------------------------------------------------------- browser


def figure_count(page: Page) -> int:
    return page.locator(FIGURE).count()


def assert_one_svg_per_chart(page: Page) -> None:
    # A re-render that did not replace the old view would leave two drawings.
    assert page.locator(f"{FIGURE} .connlab-chart__view svg.marks").count() == figure_count(page)


def mark_container(page: Page) -> None:
    """Remember the current content; instant navigation replaces that element."""
    page.evaluate(
        "() => { window.__connlabOldContent = document.querySelector('[data-md-component=container]'); }"
    )


def wait_for_new_content(page: Page) -> None:
    # Material updates the URL before the new page arrives, so wait for the swap itself.
    page.wait_for_function(
        "() => document.querySelector('[data-md-component=container]') !== window.__connlabOldContent"
    )


# --------------------------------------------------------------------------- tests


def test_every_chart_renders(watched: Watched, site_url: str, chart_pages: list[ChartPage]) -> None:
    page = watched.page
    for chart_page in chart_pages:
        page.goto(site_url + chart_page.url, wait_until="load")
        assert figure_count(page) == chart_page.figures, chart_page.url
        wait_for_charts(watched)
        views_with_svg = page.locator(f"{FIGURE} .connlab-chart__view:has(svg)").count()
        assert views_with_svg == chart_page.figures, chart_page.url
    watched.assert_clean()


def test_palette_toggle_rerenders_charts(
    watched: Watched, site_url: str, chart_pages: list[ChartPage]
) -> None:
    page = watched.page
    page.goto(site_url + chart_pages[0].url, wait_until="load")
    wait_for_charts(watched)
    body = page.locator("body")
    assert body.get_attribute("data-md-color-scheme") == "default"

    # default -> slate: the visible toggle is the label for the slate input.
    page.locator(PALETTE_TOGGLE.format(index=1)).click()
    page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
    wait_for_charts(watched)
    schemes = page.locator(FIGURE).evaluate_all("fs => fs.map(f => f.dataset.renderedScheme)")
    assert schemes and set(schemes) == {"slate"}
    assert_one_svg_per_chart(page)

    # ...and back, so a second re-render (finalizing the slate views) works too.
    page.locator(PALETTE_TOGGLE.format(index=0)).click()
    page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'default'")
    wait_for_charts(watched)
    schemes = page.locator(FIGURE).evaluate_all("fs => fs.map(f => f.dataset.renderedScheme)")
    assert schemes and set(schemes) == {"default"}
    assert_one_svg_per_chart(page)
    watched.assert_clean()


def test_instant_navigation_renders_charts(watched: Watched, instant_site_url: str) -> None:
    """On the site built with an address (instant navigation needs one: hooks.py), charts render on a page
    reached without a page load, and again going back."""
    site_url = instant_site_url
    page = watched.page
    # Material intercepts a click only once it has read the sitemap, which a busy machine fetches late: a
    # click before that is a full page load. networkidle waits for the fetch.
    page.goto(site_url, wait_until="networkidle")
    # A full reload would drop this property; instant navigation keeps the window.
    page.evaluate("() => { window.__connlabNoReload = true; }")
    mark_container(page)
    page.locator(ARTICLE_NAV_LINK).first.click()
    page.wait_for_url("**/" + ARTICLE_PAGE)
    wait_for_new_content(page)
    assert page.evaluate("() => window.__connlabNoReload === true"), "navigation did a full page load"
    assert figure_count(page) > 0, "the article has no chart"
    wait_for_charts(watched)

    # Back to the home page through history (popstate, also instant).
    mark_container(page)
    page.go_back()
    page.wait_for_url(site_url)
    wait_for_new_content(page)
    assert page.evaluate("() => window.__connlabNoReload === true"), "back navigation did a full page load"
    if figure_count(page) > 0:
        wait_for_charts(watched)
    watched.assert_clean()


def test_chart_libraries_load_only_where_a_page_has_a_chart(watched: Watched, instant_site_url: str) -> None:
    """vega and vega-embed are most of a page's weight: a page without a chart never fetches them; the first
    page with one does, once, also after instant navigation (the site built with an address has it). vega-lite
    is not fetched: every chart of the site is drawn from Vega compiled at build time."""
    site_url = instant_site_url
    page = watched.page
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(urlsplit(request.url).path))
    page.goto(site_url + "contributing/", wait_until="load")
    assert figure_count(page) == 0
    page.wait_for_timeout(500)  # nothing is fetched late either
    assert [path for path in fetched if "/vendor/" in path] == []

    mark_container(page)
    page.locator(ARTICLE_NAV_LINK).first.click()
    wait_for_new_content(page)
    wait_for_charts(watched)
    libraries = [path.rsplit("/", 1)[-1] for path in fetched if "/vendor/" in path]
    assert libraries == ["vega.min.js", "vega-embed.min.js"]
    watched.assert_clean()


# The chart requests a page names in its head (connlab/site/publish/preloads.py), and the compiled
# charts' variants.
PRELOADS_SEEN_INIT = """window.__preloads = [];
new MutationObserver(records => records.forEach(record => record.addedNodes.forEach(node => {
  if (node.nodeName === "LINK" && node.rel === "preload") window.__preloads.push([node.as, node.href]);
}))).observe(document, {childList: true, subtree: true});"""
PRELOADS_JS = "() => window.__preloads"
VARIANT_FILE = re.compile(r"\.((?:wide|narrow)-(?:light|dark)(?:-fixed)?)\.json$")


@pytest.mark.parametrize(
    ("width", "palette", "variant"),
    [(1400, 0, "wide-light"), (1400, 1, "wide-dark"), (390, 0, "narrow-light")],
    ids=["wide-light", "wide-dark", "narrow-light"],
)
def test_a_chart_page_preloads_what_charts_js_then_uses(
    watched: Watched, site_url: str, chart_pages: list[ChartPage], width: int, palette: int, variant: str
) -> None:
    """A chart page's head asks for the chart libraries, the compiled set's expressions and the compiled
    variant its charts will be drawn in (the reader's palette, the window's width) as the page starts. Each
    is the request charts.js then makes: every one is fetched once, and one variant only besides the fixed
    width's (a preload that charts.js did not use would be a second request, or a second variant)."""
    page = watched.page
    page.set_viewport_size({"width": width, "height": 900})
    machine = next(chart_page for chart_page in chart_pages if chart_page.browser_only)
    if palette:  # the reader's palette, as Material keeps it, is the one the next page is drawn in
        page.goto(site_url + machine.url, wait_until="load")
        wait_for_charts(watched)
        page.locator(PALETTE_TOGGLE.format(index=palette)).click()
        # Drawn again in it, so that no request of this page's is still to come.
        page.wait_for_function(
            "() => [...document.querySelectorAll('figure.connlab-chart')]"
            ".every(f => f.dataset.renderedScheme === document.body.dataset.mdColorScheme)"
        )
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.add_init_script(PRELOADS_SEEN_INIT)
    page.goto(site_url + machine.url, wait_until="load")
    wait_for_charts(watched)
    preloaded = page.evaluate(PRELOADS_JS)
    kinds = sorted({kind for kind, _ in preloaded})
    assert kinds == ["fetch", "script"], preloaded
    charts = [url for url in fetched if "/assets/vendor/" in url or "/assets/vega/" in url]
    assert len(charts) == len(set(charts)), f"a chart file was fetched twice: {charts}"
    assert {href for _, href in preloaded} <= set(charts), "a preloaded file nothing asked for"
    variants = {match.group(1) for url in charts if (match := VARIANT_FILE.search(urlsplit(url).path))}
    # A chart whose plot the column leaves too narrow is drawn again at a fixed width, from that variant.
    assert {name for name in variants if not name.endswith("-fixed")} == {variant}, charts
    watched.assert_clean()


def test_materials_script_runs_on_a_machine_page_and_search_finds_the_machine(
    watched: Watched, site_url: str, chart_pages: list[ChartPage]
) -> None:
    """A machine page is the shell MkDocs built with the machine's content: Material's script runs on it (its
    palette toggle redraws the charts), and its search finds the machine by its name (a machine page's entry
    in the index: connlab.site.publish.search)."""
    page = watched.page
    machine = next(chart_page for chart_page in chart_pages if chart_page.browser_only)
    page.goto(site_url + machine.url, wait_until="load")
    wait_for_charts(watched)
    page.locator(PALETTE_TOGGLE.format(index=1)).click()
    wait_for_charts(watched)
    assert set(page.locator(FIGURE).evaluate_all("fs => fs.map(f => f.dataset.renderedScheme)")) == {"slate"}
    name = machine.url.rstrip("/").rsplit("/", 1)[-1]
    page.keyboard.press("/")
    page.keyboard.type(name)
    first = page.locator(".md-search-result__item").first
    first.wait_for()
    assert name in first.inner_text()
    watched.assert_clean()


def test_materials_script_runs_on_a_chart_page_whose_charts_js_did_not_load(
    watched: Watched, site_url: str, chart_pages: list[ChartPage]
) -> None:
    """Without charts.js, Material's script still runs and its palette toggle works."""
    page = watched.page
    page.route("**/assets/charts.js", lambda route: route.abort())
    page.goto(site_url + chart_pages[0].url, wait_until="load")
    page.wait_for_function(PAGE_SCRIPTS_RAN_JS, timeout=TIMEOUT_MS)
    assert page.evaluate("typeof window.document$") == "object"
    page.locator(PALETTE_TOGGLE.format(index=1)).click()
    page.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")


@pytest.mark.parametrize("watched", [False], ids=["no-js"], indirect=True)
def test_noscript_fallback_images_load(watched: Watched, site_url: str, chart_pages: list[ChartPage]) -> None:
    """Without JavaScript the <noscript> SVGs are shown; their relative src must resolve."""
    page = watched.page
    for chart_page in chart_pages:
        page.goto(site_url + chart_page.url, wait_until="load")
        images = page.locator("img.connlab-chart__fallback")
        assert images.count() == chart_page.figures - chart_page.browser_only, chart_page.url
        # A chart drawn in the browser only says, without JavaScript, where its figures are.
        notes = page.locator("p.connlab-chart__fallback", has_text="drawn by JavaScript")
        assert notes.count() == chart_page.browser_only, chart_page.url
        broken = images.evaluate_all(
            "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))"
        )
        assert broken == [], f"fallback images that did not load on /{chart_page.url}"
    watched.assert_clean()


# --------------------------------------------------------------------------- injected content

NASTY_MACHINE = "nasty-box"
NASTY_LITERALS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "[click](javascript:alert(1))",
    "{{ 7*7 }}",
    "Ünïcödé — 東京 🚀",
)
NASTY_DESCRIPTION = "Contributed: " + " and ".join(NASTY_LITERALS)
# Everything the description could have smuggled into the DOM.
INJECTED_JS = """
() => ({
  pwned: typeof window.__pwned,
  imgOnerror: document.querySelectorAll("img[onerror]").length,
  scripts: [...document.scripts].filter(s => s.textContent.includes("__pwned")).length,
  jsLinks: [...document.links].filter(a => a.href.trim().toLowerCase().startsWith("javascript:")).length,
})
"""


def tiny_run_rows() -> list[dict[str, Any]]:
    """A complete tiny run: three workloads at 1 and 4 clients, three passes."""
    base_tps = {"mixed": 5000.0, "select-only": 9000.0, "tpcb-like": 800.0}
    rows = []
    for pass_no in (1, 2, 3):
        for clients in (1, 4) if pass_no != 2 else (4, 1):
            for workload, tps in base_tps.items():
                value = tps * (2.5 if clients == 4 else 1.0) * (1 + 0.01 * pass_no)
                rows.append(
                    {
                        "workload": workload,
                        "clients": clients,
                        "pass_no": pass_no,
                        "pass_order": "desc" if pass_no == 2 else "asc",
                        "tps": value,
                        "latency_avg_ms": round(clients * 1000 / value, 4),
                    }
                )
    return rows


@pytest.mark.mkdocs
def test_injected_content_is_shown_as_text(watched: Watched, write_run: RunWriter, shared_tmp: Path) -> None:
    """A contributed description full of markup is shown literally on the built pages and runs nothing."""
    results = shared_tmp / "results"
    write_run(results, NASTY_MACHINE, tiny_run_rows(), profile="tiny", run_id="tiny-20260101T000000Z")
    machine_file = results / NASTY_MACHINE / "machine.yaml"
    facts = yaml.safe_load(machine_file.read_text())
    machine_file.write_text(yaml.safe_dump({**facts, "description": NASTY_DESCRIPTION}, allow_unicode=True))
    site = build_site(results, shared_tmp / "build")

    page = watched.page
    with serving(site) as url:
        # The description shows on the Machines page and on the machine's own page (its detail).
        for path in ("machines/", f"machines/{NASTY_MACHINE}/"):
            page.goto(url + path, wait_until="load")
            page.wait_for_timeout(300)  # let anything injected (an onerror handler) fire
            found = page.evaluate(INJECTED_JS)
            assert found == {"pwned": "undefined", "imgOnerror": 0, "scripts": 0, "jsLinks": 0}, path
            text = page.locator("article.md-content__inner").inner_text()
            assert NASTY_MACHINE in text, path
            for literal in NASTY_LITERALS:
                assert literal in text, f"{literal!r} not shown literally on /{path}"
    watched.assert_clean()


# --------------------------------------------------------------------------- strict Content-Security-Policy

# What a strict host would send: no 'unsafe-eval', so nothing may compile code from strings (Vega does,
# unless charts.js asks vega-embed for its interpreter with `ast: true`). 'unsafe-inline' is for
# Material's inline scripts and styles.
STRICT_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:"
)
# Registered before any page script runs; CSP violations are also console errors, but this names the
# directive and the blocked source.
RECORD_CSP_VIOLATIONS_JS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI} (${where})`);
});
"""
# Proof that the header was enforced, so a passing test is not vacuous. Code that Playwright evaluates is
# exempt from the page's CSP, so the attempt runs later, from a timer, as the page's own code.
EVAL_PROBE_JS = """
() => new Promise((resolve) => setTimeout(() => {
  try { new Function("return 1")(); resolve("allowed"); } catch (e) { resolve(e.name); }
}))
"""


def enforce_strict_csp(w: Watched) -> None:
    """Serve every local document with STRICT_CSP; requests to other hosts are still refused."""

    def route(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname not in LOCAL_HOSTS:
            w.external_requests.append(url)
            route.abort()
        elif route.request.resource_type == "document":
            response = route.fetch()
            route.fulfill(
                response=response, headers={**response.headers, "content-security-policy": STRICT_CSP}
            )
        else:
            route.continue_()

    w.page.route("**/*", route)  # page routes take precedence over the fixture's context route
    w.page.add_init_script(RECORD_CSP_VIOLATIONS_JS)


def csp_violations(page: Page) -> list[str]:
    return page.evaluate("() => window.__cspViolations")


def test_charts_render_under_strict_csp(
    watched: Watched, site_url: str, chart_pages: list[ChartPage]
) -> None:
    page = watched.page
    enforce_strict_csp(watched)
    for chart_page in chart_pages:
        page.goto(site_url + chart_page.url, wait_until="load")
        wait_for_charts(watched)
        assert_one_svg_per_chart(page)
        assert figure_count(page) == chart_page.figures, chart_page.url
        assert csp_violations(page) == [], f"CSP violations on /{chart_page.url}"
        # The compiled charts' expressions are functions from a script of the site's, which the policy allows.
        assert set(page.evaluate(INTERPRETED_JS).values()) <= {"0"}, chart_page.url
    watched.assert_clean()
    assert page.evaluate(EVAL_PROBE_JS) == "EvalError", "the Content-Security-Policy was not enforced"


# --------------------------------------------------------------------------- the USL simulator

# The simulator is a machine's detail: it sits on that machine's own page.
POOL_SIZING_PAGE = "machines/amd-epyc-2c-24g/"
POOL_SIM_FIGURE = "#chart-pool-sim-amd-epyc-2c-24g"
USL_MODEL_PATH = ".connlab-chart__view g.usl_model_marks path"
USL_PEAK_LABEL = ".connlab-chart__view g.usl_peak_label_marks text"
KAPPA_SLIDER = '.connlab-chart__view input[type="range"][name="kappa"]'
# Moves the κ slider to 60 % of its range: the sliders start at the fit and κ's range reaches at least
# five times the fitted κ, so this is always a larger κ, hence a lower peak.
MOVE_KAPPA_JS = """
(input) => {
  input.value = String(Number(input.min) + 0.6 * (Number(input.max) - Number(input.min)));
  input.dispatchEvent(new Event("input", { bubbles: true }));
}
"""
CHANGED_JS = "([selector, before]) => document.querySelector(selector)?.getAttribute('d') !== before"
LABEL_CHANGED_JS = "([selector, before]) => document.querySelector(selector)?.textContent !== before"


def peak_clients(label: str) -> float:
    match = re.fullmatch(r"N\* ≈ ([0-9.]+)", label)
    assert match, f"unexpected N* label {label!r}"
    return float(match.group(1))


def exercise_usl_simulator(w: Watched, figure: str) -> None:
    """Moving the κ slider redraws the model curve and moves N* down."""
    page = w.page
    wait_for_charts(w)
    model, label = f"{figure} {USL_MODEL_PATH}", f"{figure} {USL_PEAK_LABEL}"
    path_before = page.locator(model).get_attribute("d")
    label_before = page.locator(label).text_content()
    assert path_before and label_before, "the model line or the N* label is missing"

    page.locator(f"{figure} {KAPPA_SLIDER}").evaluate(MOVE_KAPPA_JS)
    page.wait_for_function(CHANGED_JS, arg=[model, path_before])
    page.wait_for_function(LABEL_CHANGED_JS, arg=[label, label_before])
    label_after = page.locator(label).text_content() or ""
    assert peak_clients(label_after) < peak_clients(label_before), (label_before, label_after)
    assert csp_violations(page) == []
    w.assert_clean()


def usl_scratch_site(built_site: Path, folder: Path) -> Path:
    """A bare page with one USL simulator and the built site's scripts: the chart kind on its own, before
    (or without) any article using it."""
    fit = {"fit_lambda": 2000.0, "fit_sigma": 0.35, "fit_kappa": 0.004}
    records = [
        {"machine": "test-box", "workload": "tpcb-like", "clients": n, **fit, **_usl_tps(n, fit)}
        for n in (1, 2, 4, 8, 16, 32, 64, 128, 256)
    ]
    block = chart_block(usl_simulator(records), "usl-sim", "USL simulator", "USL simulator", "none.svg")
    # The same scripts, in the same order, as the built site's pages load; charts.js loads the chart
    # libraries from assets/vendor/ beside it.
    index = (built_site / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script src="(assets/(?:vendor/[^"]+|charts\.js))"', index)
    assert scripts[-1] == "assets/charts.js", scripts
    for script in scripts:
        (folder / script).parent.mkdir(parents=True, exist_ok=True)
        (folder / script).write_bytes((built_site / script).read_bytes())
    shutil.copytree(built_site / "assets" / "vendor", folder / "assets" / "vendor")
    tags = "\n".join(f'<script src="{script}"></script>' for script in scripts)
    (folder / "index.html").write_text(
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>USL simulator</title></head>\n'
        f'<body><main style="width: 900px">\n{block}\n</main>\n{tags}\n</body></html>\n',
        encoding="utf-8",
    )
    return folder


def _usl_tps(n: int, fit: dict[str, float]) -> dict[str, float]:
    lam, sigma, kappa = fit["fit_lambda"], fit["fit_sigma"], fit["fit_kappa"]
    tps = lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
    return {"tps_median": tps, "tps_min": 0.95 * tps, "tps_max": 1.05 * tps}


def test_usl_simulator_follows_the_sliders(watched: Watched, built_site: Path, tmp_path: Path) -> None:
    site = usl_scratch_site(built_site, tmp_path)
    enforce_strict_csp(watched)  # the simulator's expressions must work without 'unsafe-eval'
    with serving(site) as url:
        watched.page.goto(url, wait_until="load")
        exercise_usl_simulator(watched, "#chart-usl-sim")


def test_pool_sizing_simulator_follows_the_sliders(watched: Watched, site_url: str, built_site: Path) -> None:
    if not (built_site / POOL_SIZING_PAGE / "index.html").is_file():
        pytest.skip(f"{POOL_SIZING_PAGE} is not in the built site yet")
    page = watched.page
    enforce_strict_csp(watched)
    page.goto(site_url + POOL_SIZING_PAGE, wait_until="load")
    assert page.locator(POOL_SIM_FIGURE).count() == 1, f"no {POOL_SIM_FIGURE} on /{POOL_SIZING_PAGE}"
    exercise_usl_simulator(watched, POOL_SIM_FIGURE)


OFFERED = 'a[data-offer="{}"]'
INLINE_SPEC_JS = "(figure) => JSON.parse(figure.querySelector('script.connlab-chart__spec').textContent)"


def js_text(value: object) -> str:
    """A value as JavaScript's String() writes it in a CSV cell (null and undefined as empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def test_a_machine_page_chart_offers_its_rows_and_spec_from_the_page(
    watched: Watched, site_url: str, built_site: Path
) -> None:
    """A machine's page writes no file beside its charts: the links download the spec the page holds and
    its rows as CSV, under the chart's own names, also under a strict Content-Security-Policy; without
    JavaScript the line is hidden."""
    if not (built_site / POOL_SIZING_PAGE / "index.html").is_file():
        pytest.skip(f"{POOL_SIZING_PAGE} is not in the built site yet")
    page = watched.page
    enforce_strict_csp(watched)
    page.goto(site_url + POOL_SIZING_PAGE, wait_until="load")
    wait_for_charts(watched)
    inline = page.locator(POOL_SIM_FIGURE).evaluate(INLINE_SPEC_JS)
    downloaded = {}
    for offer in ("spec", "csv"):
        link = page.locator(f"{POOL_SIM_FIGURE} {OFFERED.format(offer)}")
        assert link.is_visible(), f"the {offer} download is not offered"
        with page.expect_download() as started:
            link.click()
        download = started.value
        downloaded[download.suggested_filename] = Path(download.path()).read_text(encoding="utf-8")
    name = "pool-sim-amd-epyc-2c-24g"
    assert sorted(downloaded) == [f"{name}.csv", f"{name}.vl.json"]
    spec = json.loads(downloaded[f"{name}.vl.json"])
    assert spec == inline
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    rows = spec["datasets"]["rows"]
    table = list(csv.DictReader(io.StringIO(downloaded[f"{name}.csv"])))
    assert len(table) == len(rows) > 0
    assert list(table[0]) == list(rows[0])
    assert all(
        cells[key] == js_text(value) or (isinstance(value, float) and float(cells[key]) == value)
        for cells, row in zip(table, rows, strict=True)
        for key, value in row.items()
    )
    assert csp_violations(page) == []
    watched.assert_clean()
    html = (built_site / POOL_SIZING_PAGE / "index.html").read_text(encoding="utf-8")
    assert '<p class="connlab-chart__downloads" hidden>' in html, "offered without JavaScript"


# Per chart drawn in the browser only: whether its view scrolls sideways, whether vega-embed's export button
# lies inside the view, what Material's note styles would put before and after it, and the line its details
# would draw under the chart.
EXPORT_BUTTON_JS = """
() => [...document.querySelectorAll("figure.connlab-chart--browser-only")].map(f => {
  const view = f.querySelector(".connlab-chart__view");
  const details = view.querySelector("details");
  const button = view.querySelector("details > summary");
  const inside = (box, outer) => box.left >= outer.left - 1 && box.right <= outer.right + 1;
  return {
    id: f.id,
    scrolls: view.scrollWidth > view.clientWidth + 1,
    buttonInside: Boolean(button) && inside(button.getBoundingClientRect(), view.getBoundingClientRect()),
    buttonWidth: button ? Math.round(button.getBoundingClientRect().width) : null,
    before: button ? getComputedStyle(button, "::before").content : null,
    after: button ? getComputedStyle(button, "::after").content : null,
    detailsHeight: details ? details.getBoundingClientRect().height : null,
    detailsBorder: details ? getComputedStyle(details).borderTopWidth : null,
  };
})
"""


def test_a_machine_page_chart_export_button_is_vega_embeds_own(watched: Watched, site_url: str) -> None:
    """vega-embed's export menu is a <details>, which Material styles as a collapsible note: without
    connlab.css undoing that, every chart on a machine's page scrolled sideways (the button 12px out of the
    view), had a line under it, and a wide button with Material's icons lay over its legend."""
    page = watched.page
    page.goto(site_url + POOL_SIZING_PAGE, wait_until="load")
    wait_for_charts(watched)
    charts = page.evaluate(EXPORT_BUTTON_JS)
    assert charts, f"no chart drawn in the browser only on /{POOL_SIZING_PAGE}"
    expected = {
        "scrolls": False, "buttonInside": True, "before": "none", "after": "none",
        "detailsHeight": 0, "detailsBorder": "0px",
    }  # fmt: skip
    wrong = {c["id"]: c for c in charts if {key: c[key] for key in expected} != expected}
    assert not wrong, wrong
    # vega-embed's round button: its 14px icon, 6px of padding and a 1px border on each side.
    assert {c["buttonWidth"] for c in charts} == {28}
    watched.assert_clean()


# --------------------------------------------------------------------------- compiled charts

# Every chart laid out at once, so that each is drawn at its column's width from the start: a chart out of
# view is otherwise drawn again once it comes near the view (connlab.css: content-visibility).
ALL_LAID_OUT = "<style>figure.connlab-chart { content-visibility: visible !important; }</style>"
COMPILED_ATTRIBUTES = re.compile(r' data-vega-(?:set|kind)="[^"]*"')
VIEWS_JS = """
() => [...document.querySelectorAll("figure.connlab-chart")]
  .map(f => [f.id, f.getAttribute("data-rendered-scheme"), f.querySelector(".connlab-chart__view").innerHTML])
"""
# How many expressions of each compiled chart Vega interpreted for want of the function written at build time
# (charts.js: INTERPRETED; connlab.site.charts.expressions).
INTERPRETED_JS = """
() => Object.fromEntries([...document.querySelectorAll("figure.connlab-chart[data-vega-kind]")]
  .map(f => [f.id, f.getAttribute("data-interpreted-expressions")]))
"""
# Vega numbers the ids it makes (clip paths, gradients) across every view of the page.
VEGA_ID = re.compile(r'(?<=id=")[^"]+(?=")')
DESKTOP_WIDTH, PHONE_WIDTH = 1280, 390


def normalised_ids(markup: str) -> str:
    """The view's markup with each id, and every reference to it, numbered in the order it is defined."""
    names = {name: f"id{index}" for index, name in enumerate(dict.fromkeys(VEGA_ID.findall(markup)))}
    if not names:
        return markup
    pattern = re.compile(r'(id="|#)(' + "|".join(map(re.escape, names)) + r')(?=["\)])')
    return pattern.sub(lambda match: match.group(1) + names[match.group(2)], markup)


def drawn_views(
    browser: Browser, url: str, width: int, slate: bool, compiled: bool
) -> tuple[dict[str, tuple[str, str]], list[str], dict[str, str | None]]:
    """Each chart's view as drawn (ids normalised) on the page at url, with its compiled Vega (compiled) or
    with the attributes that name it removed, so that charts.js compiles its Vega-Lite spec as before; the
    chart libraries the page fetched; and how many expressions each compiled chart interpreted."""
    context = browser.new_context(viewport={"width": width, "height": 900}, service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        fetched: list[str] = []
        page.on("request", lambda request: fetched.append(urlsplit(request.url).path))

        def rewrite(route: Route) -> None:
            response = route.fetch()
            text = response.text().replace("</head>", f"{ALL_LAID_OUT}</head>", 1)
            route.fulfill(response=response, body=text if compiled else COMPILED_ATTRIBUTES.sub("", text))

        page.route(url, rewrite)
        page.goto(url, wait_until="load")
        page.wait_for_function(CHARTS_RENDERED_JS)
        if slate:
            page.locator(PALETTE_TOGGLE.format(index=1)).click()
            page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
            page.wait_for_function(CHARTS_RENDERED_JS)
        # A chart whose plot came out narrower than its minimum is drawn again: wait until nothing changes.
        views, previous = page.evaluate(VIEWS_JS), None
        while views != previous:
            page.wait_for_timeout(300)
            page.wait_for_function(CHARTS_RENDERED_JS)
            previous, views = views, page.evaluate(VIEWS_JS)
        drawn = {chart: (scheme, normalised_ids(html)) for chart, scheme, html in views}
        return drawn, fetched, page.evaluate(INTERPRETED_JS)
    finally:
        context.close()


@pytest.mark.parametrize("slate", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [DESKTOP_WIDTH, PHONE_WIDTH], ids=["desktop", "phone"])
@pytest.mark.parametrize("path", [POOL_SIZING_PAGE, ARTICLE_PAGE], ids=["machine", "article"])
def test_compiled_charts_draw_what_vega_lite_draws(
    browser: Browser, site_url: str, built_site: Path, path: str, width: int, slate: bool
) -> None:
    """Every chart of a machine's page (drawn in the browser only) and of an article (across machines, with
    an SVG fallback), drawn from its kind's Vega compiled at build time, is the drawing (SVG, sliders and
    export menu) that compiling its Vega-Lite spec in the browser makes, with the functions written at build
    time for every expression of it; and the page never fetches vega-lite, which the page with the
    attributes removed still does."""
    html = (built_site / path / "index.html").read_text(encoding="utf-8")
    figures = html.count('<figure class="connlab-chart')
    assert html.count(" data-vega-kind=") == figures > 0, "not every chart of the page is compiled"
    url = site_url + path
    compiled, fetched, interpreted = drawn_views(browser, url, width, slate, compiled=True)
    from_vega_lite, fetched_before, _ = drawn_views(browser, url, width, slate, compiled=False)
    assert interpreted == dict.fromkeys(compiled, "0"), "expressions interpreted instead of compiled"
    assert len(compiled) == figures
    assert {scheme for scheme, _ in compiled.values()} == {"slate" if slate else "default"}
    assert all("<svg" in view for _, view in compiled.values())
    differing = [chart for chart in compiled if compiled[chart] != from_vega_lite[chart]]
    assert differing == [], f"drawn differently from the Vega-Lite spec: {differing}"
    assert not any(path.endswith("/vega-lite.min.js") for path in fetched), "vega-lite fetched"
    assert any(path.endswith("/vega-lite.min.js") for path in fetched_before)
    assert any("/assets/vega/" in path for path in fetched)
    assert any(path.endswith(".expressions.js") for path in fetched)


def test_a_chart_not_compiled_reached_from_a_compiled_page_draws(
    watched: Watched, instant_site_url: str
) -> None:
    """A machine's page loads no vega-lite and runs vega-embed without it; instant navigation (on the site
    built with an address) to a page with a chart that names no compiled Vega (a kind built in full: the
    article is served with its figures' attributes removed) then loads vega-lite and runs vega-embed again,
    which takes vega-lite only when it runs."""
    site_url = instant_site_url
    page = watched.page
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(urlsplit(request.url).path))

    def not_compiled(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, body=COMPILED_ATTRIBUTES.sub("", response.text()))

    page.route(site_url + ARTICLE_PAGE, not_compiled)
    page.goto(site_url + POOL_SIZING_PAGE, wait_until="load")
    wait_for_charts(watched)
    libraries = [path.rsplit("/", 1)[-1] for path in fetched if "/vendor/" in path]
    assert libraries == ["vega.min.js", "vega-embed.min.js"]
    page.evaluate("() => { window.__connlabNoReload = true; window.__connlabEmbed = window.vegaEmbed; }")
    mark_container(page)
    page.locator(ARTICLE_NAV_LINK).first.click()
    page.wait_for_url("**/" + ARTICLE_PAGE)
    wait_for_new_content(page)
    assert page.evaluate("() => window.__connlabNoReload === true"), "navigation did a full page load"
    wait_for_charts(watched)
    assert page.locator(f"{FIGURE}[data-vega-kind]").count() == 0, "the served page names compiled Vega"
    assert page.evaluate("() => window.vegaEmbed !== window.__connlabEmbed"), "vega-embed was not run again"
    libraries = [path.rsplit("/", 1)[-1] for path in fetched if "/vendor/" in path]
    # vega-embed's second run may come from the browser's memory cache, unseen as a request.
    assert libraries[:3] == ["vega.min.js", "vega-embed.min.js", "vega-lite.min.js"]
    watched.assert_clean()


FILE_NOTICE = "#connlab-file-notice"


def test_a_page_opened_as_a_file_says_to_serve_the_site(
    browser: Browser, built_site: Path, chart_pages: list[ChartPage]
) -> None:
    """Opened from the file system (build/site/index.html), a page cannot fetch its compiled charts or the
    search index: the home page and a machine page say so at their top and name `make serve` (README: The
    site). Served, no page says it."""
    machine = next(chart_page for chart_page in chart_pages if chart_page.browser_only)
    page = browser.new_page()
    try:
        for relative in ("index.html", f"{machine.url}index.html"):
            page.goto((built_site / relative).as_uri(), wait_until="load")
            notice = page.locator(FILE_NOTICE)
            notice.wait_for(state="visible")
            assert "make serve" in notice.inner_text()
    finally:
        page.close()


def test_a_served_page_says_nothing_about_files(watched: Watched, site_url: str) -> None:
    watched.page.goto(site_url, wait_until="load")
    watched.page.wait_for_function(PAGE_SCRIPTS_RAN_JS)
    assert watched.page.locator(FILE_NOTICE).count() == 0
