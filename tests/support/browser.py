"""What the browser tests share: Chromium as they start it, a static server for a built site, a watched page,
the wait for charts. The fixtures made of them (browser, site_url, instant_site_url, watched) are conftest's.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bench import served_site

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Route

# Chromium as the browser tests start it: headless, and with nothing that would call another host.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# A bound on a hang, not a judgement of speed: on a busy 2-core machine Chromium lays out and draws a long
# page many times slower than on an idle one, and a test must not need spare CPU.
TIMEOUT_MS = 90_000

FIGURE = "figure.connlab-chart"
# True once every chart figure on the page has an <svg> drawn into its view, drawn for
# the scheme the page currently shows.
CHARTS_RENDERED_JS = """
() => {
  const figures = [...document.querySelectorAll("figure.connlab-chart")];
  const scheme = document.body.getAttribute("data-md-color-scheme") === "slate" ? "slate" : "default";
  return figures.length > 0 && figures.every(f => {
    const svg = f.querySelector(".connlab-chart__view svg");
    return svg && f.getAttribute("data-rendered-scheme") === scheme;
  });
}
"""
# Figures inside a hidden container (e.g. an inactive content tab) legitimately have
# zero width; every visible one must fill a real width.
CHART_WIDTHS_JS = """
() => [...document.querySelectorAll("figure.connlab-chart")]
  .filter(f => f.offsetParent !== null)
  .map(f => [f.id, f.querySelector(".connlab-chart__view svg").getBoundingClientRect().width])
"""


class _SiteHandler(SimpleHTTPRequestHandler):
    """Static files, plus sitemap.xml rewritten to the address actually served.

    Material only turns links into instant navigation when they are listed in
    sitemap.xml, whose <loc> entries carry site_url (host, port and path). Material
    swaps in the page's scheme and host name but keeps the port and path, so on a
    random test port nothing would match. `mkdocs serve` solves this by rewriting
    site_url; a plain static server has to rewrite the sitemap instead.
    """

    def do_GET(self) -> None:
        if urlsplit(self.path).path == "/sitemap.xml":
            self._send_sitemap()
        else:
            super().do_GET()

    def _send_sitemap(self) -> None:
        xml = (Path(self.directory) / "sitemap.xml").read_text(encoding="utf-8")
        locs = re.findall(r"<loc>([^<]+)</loc>", xml)
        if locs:
            site_url = min(locs, key=len)  # the home page's loc is site_url itself
            host, port = self.server.server_address[:2]
            xml = xml.replace(f"<loc>{site_url}", f"<loc>http://{host}:{port}/")
        body = xml.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep pytest output readable


def serving(directory: Path) -> contextlib.AbstractContextManager[str]:
    """The built site served as the benchmarks serve it, its sitemap rewritten to the port (_SiteHandler)."""
    return served_site.serving(directory, _SiteHandler)


@dataclass
class Watched:
    """A page plus everything it reported that should not happen."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.external_requests == [], "requests to other hosts"
        assert self.page_errors == [], "uncaught page errors"
        assert self.console_errors == [], "console errors"


@contextlib.contextmanager
def watched_page(browser: Browser, java_script_enabled: bool = True) -> Iterator[Watched]:
    """A fresh page in a context of its own, closed afterwards (the watched fixture)."""
    # Wide enough for Material's desktop layout, so the navigation sidebar is visible.
    context = browser.new_context(
        viewport={"width": 1400, "height": 900},
        service_workers="block",
        java_script_enabled=java_script_enabled,
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    w = Watched(page)

    def route(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            w.external_requests.append(url)
            route.abort()

    def console(msg: ConsoleMessage) -> None:
        if msg.type == "error":
            w.console_errors.append(f"{msg.text} ({msg.location.get('url')})")

    context.route("**/*", route)
    page.on("console", console)
    page.on("pageerror", lambda err: w.page_errors.append(str(err)))
    try:
        yield w
    finally:
        context.close()


# Material's script has started the page (its document$ announces pages, and charts.js follows it), or the
# page has no Material (a test's bare page).
PAGE_SCRIPTS_RAN_JS = (
    "() => typeof window.document$ !== 'undefined'"
    " || !document.querySelector('script[src*=\"javascripts/bundle.\"]')"
)


def wait_for_charts(w: Watched) -> None:
    """Every chart drawn, and the page's scripts that wait for them run."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        w.page.wait_for_function(CHARTS_RENDERED_JS)
        w.page.wait_for_function(PAGE_SCRIPTS_RAN_JS)
    except PlaywrightTimeout as exc:  # a bare timeout says nothing; show what the page reported
        raise AssertionError(
            f"charts did not render on {w.page.url}: page errors {w.page_errors}, "
            f"console errors {w.console_errors}, external requests {w.external_requests}"
        ) from exc
    widths = w.page.evaluate(CHART_WIDTHS_JS)
    narrow = [(chart_id, width) for chart_id, width in widths if width < 100]
    assert not narrow, f"charts not following the container width: {narrow}"


def evaluate_within(page: Page, script: str, timeout_ms: float = TIMEOUT_MS) -> Any:
    """What an async script (an `async () => ...` expression) returns, or Playwright's TimeoutError after
    timeout_ms. page.evaluate has no deadline, and a script's own setTimeout never fires while the page's
    renderer is stalled: one stalled renderer held a shard of the browser tests until pytest-timeout ended
    it. wait_for_function keeps its deadline outside the page; the result is wrapped so that a falsy one
    (null, an empty list) still ends the wait."""
    wrapped = f"async () => ({{value: await ({script.strip()})()}})"
    return page.wait_for_function(wrapped, timeout=timeout_ms).json_value()["value"]
