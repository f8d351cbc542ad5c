"""What each article of a built site weighs, and how soon its first chart is drawn, with and without a CPU
slowdown.

For every article page (articles/<slug>/index.html) of a built site, served over HTTP by Python's threading
server as `make serve` serves it, it prints:

- html: the page's HTML, in bytes as written (issue 54: an article is at most 600 KB, 1 KB = 1,000 bytes);
- sent: what one load of the page fetched, every response counted (the page, its scripts and stylesheets, the
  chart libraries and compiled charts charts.js fetches, the search index Material's worker fetches), once
  as raw bytes and once with each response gzip-compressed (level 6). Python's server sends no response
  compressed, so the raw figure is what it sent; the gzip one is what a server that compresses (GitHub
  Pages, nginx with gzip on) would send;
- first chart: seconds from the navigation's start until the first frame after a chart was drawn (charts.js
  draws each `figure.connlab-chart` into its `.connlab-chart__view` as an <svg> and marks the figure with
  `data-rendered-scheme`: the first figure with both is the first chart drawn), at full speed and with
  Chromium's CPU slowed down (the DevTools protocol's Emulation.setCPUThrottlingRate, 4 by default: the
  speed issue 54 asks the first chart to be drawn within 3 s at). Each is the median of a few loads, each in
  a fresh browser context (an empty cache), in headless Chromium at 1280 x 900.

A figure over its limit is marked "!" (the limits are issue 54's); the script exits 0 either way: it
measures, the tests judge the HTML's size (tests/browser/test_page_weight_browser.py).

    .venv/bin/python scripts/bench/page_weight.py                      # build/site (make site)
    .venv/bin/python scripts/bench/page_weight.py --site build/test/site/site --loads 5
    .venv/bin/python scripts/bench/page_weight.py --tiny               # one article, one load: checks it runs

Timings move with the host: on a shared 2-core virtual machine a load varies by a fifth from the next, and
anything else running (a measurement, a build) slows the page down. Quote a run's figures with its host.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bench.served_site import charts_drawn_clock, serving

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
# Issue 54's limits: an article's HTML, and the first chart at a 4x CPU slowdown.
HTML_LIMIT_BYTES = 600_000
FIRST_CHART_LIMIT_S = 3.0
# A bound on a hang: a page slowed four times on a busy 2-core machine takes tens of seconds, never this.
LOAD_TIMEOUT_MS = 120_000
# After the first chart, how long the page may go without a request before its load counts as over (the
# search index and the compiled charts are fetched after the load event).
QUIET_MS = 1_500

# The first frame after a chart was drawn: when a reader sees it.
FIRST_CHART_CLOCK, FIRST_CHART_AT = charts_drawn_clock("some", "__connlabFirstChartAt")


def articles(site: Path) -> list[Path]:
    return sorted(site.glob("articles/*/index.html"))


@dataclass
class Sent:
    requests: int
    raw: int
    gzipped: int


def served_file(site: Path, url: str) -> Path | None:
    """The file Python's server answered a URL with (a folder's index.html), or None."""
    path = site / unquote(urlsplit(url).path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    return path if path.is_file() and path.resolve().is_relative_to(site.resolve()) else None


@functools.cache
def sizes(path: Path) -> tuple[int, int]:
    """A file's bytes, raw and gzip-compressed (level 6, a web server's usual), once per file."""
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, 6))


def load(browser, url: str, site: Path, throttle: float) -> tuple[float, Sent]:  # type: ignore[no-untyped-def]
    """One load in a fresh context: the seconds to the first chart, and every response it received until
    the page had been quiet for QUIET_MS after its first chart."""
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        answered: list[str] = []
        # The context's, not the page's: Material's search worker fetches the index.
        context.on("response", lambda response: answered.append(response.url))
        if throttle != 1:
            context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": throttle})
        page.add_init_script(FIRST_CHART_CLOCK)
        page.goto(url, wait_until="load")
        page.wait_for_function(f"() => ({FIRST_CHART_AT})() !== undefined")
        first = page.evaluate(FIRST_CHART_AT) / 1000
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(QUIET_MS)
        files = [served_file(site, answer) for answer in answered]
        counted = [sizes(path) for path in files if path is not None]
        sent = Sent(len(answered), sum(raw for raw, _ in counted), sum(packed for _, packed in counted))
        return first, sent
    finally:
        context.close()


@dataclass
class Row:
    page: str
    html: int
    sent: Sent
    first_s: float
    throttled_s: float


def measure(site: Path, pages: list[Path], loads: int, throttle: float) -> Iterator[Row]:
    from playwright.sync_api import sync_playwright

    with serving(site) as root, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            for page in pages:
                name = str(page.parent.relative_to(site)) + "/"
                url = root + name
                # Alternated, so that a slow minute of the host falls on both columns alike.
                fast, slow, sent = [], [], None
                for _ in range(loads):
                    seconds, sent = load(browser, url, site, 1)
                    fast.append(seconds)
                    slow.append(load(browser, url, site, throttle)[0])
                assert sent is not None
                yield Row(name, page.stat().st_size, sent, statistics.median(fast), statistics.median(slow))
        finally:
            browser.close()


HEADER = "{:<34} {:>10} {:>5} {:>11} {:>11} {:>9} {:>11}"


def header(throttle: float) -> str:
    return HEADER.format(
        "article", "html", "reqs", "sent raw", "sent gzip", "1st chart", f"at {throttle:g}x CPU"
    )


def row_line(row: Row) -> str:
    html_mark = "!" if row.html > HTML_LIMIT_BYTES else " "
    slow_mark = "!" if row.throttled_s > FIRST_CHART_LIMIT_S else " "
    return HEADER.format(
        row.page,
        f"{row.html / 1000:.0f} KB{html_mark}",
        row.sent.requests,
        f"{row.sent.raw / 1000:.0f} KB",
        f"{row.sent.gzipped / 1000:.0f} KB",
        f"{row.first_s:.2f} s",
        f"{row.throttled_s:.2f} s{slow_mark}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=REPO_ROOT / "build" / "site", help="a built site")
    parser.add_argument("--loads", type=int, default=3, help="loads per figure; the median is printed")
    parser.add_argument("--throttle", type=float, default=4.0, help="the CPU slowdown (Chromium's rate)")
    parser.add_argument("--tiny", action="store_true", help="one article, one load: checks the script runs")
    args = parser.parse_args()
    site = args.site.resolve()
    pages = articles(site)
    if not pages:
        sys.exit(f"{site}: no articles/*/index.html; build the site first (make site)")
    if not CHROMIUM.is_file():
        sys.exit(f"{CHROMIUM} is not installed (make setup installs it)")
    loads = 1 if args.tiny else args.loads
    pages = pages[:1] if args.tiny else pages
    print(f"{site}: median of {loads} load(s), headless Chromium {VIEWPORT['width']}x{VIEWPORT['height']},")
    print("sent: every response of one load, raw as served (no compression) and each gzip-compressed;")
    limits = f"{HTML_LIMIT_BYTES // 1000} KB of HTML, {FIRST_CHART_LIMIT_S:g} s at 4x"
    print(f"! over issue 54's limits ({limits})")
    print(header(args.throttle))
    for row in measure(site, pages, loads, args.throttle):
        print(row_line(row), flush=True)


if __name__ == "__main__":
    main()
