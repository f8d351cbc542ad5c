"""What the browser benchmarks share (page_weight.py, many_machines.py), and the tests' site server: a built
site served over HTTP as `make serve` serves it, and a clock the page runs itself of when its charts were
drawn.

Clocked by the page itself: a check polled from outside the page would wait for whatever runs after the
chart, and Material's script may be busy right then.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from string import Template

# Run in the page before any of its own scripts: the time (performance.now(), from the navigation's start)
# of the first frame after $which chart of the page was drawn, kept as window.$mark. charts.js marks a
# figure once its <svg> is in its view; the frame after is when a reader sees it.
_CLOCK = Template("""(() => {
  const drawn = f => f.hasAttribute("data-rendered-scheme") && f.querySelector(".connlab-chart__view svg");
  new MutationObserver((records, observer) => {
    if (![...document.querySelectorAll("figure.connlab-chart")].$which(drawn)) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.$mark = performance.now(); });
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-rendered-scheme"]});
})()""")


def charts_drawn_clock(which: str, mark: str) -> tuple[str, str]:
    """The clock's script, for the page's init scripts, and the function that reads its time (undefined
    until then): `which` is "some" (the first chart drawn) or "every" (the last, which completes the page)."""
    return _CLOCK.substitute(which=which, mark=mark), f"() => window.{mark}"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(
    site: Path, handler_class: type[http.server.SimpleHTTPRequestHandler] = QuietHandler
) -> Iterator[str]:
    """The site over HTTP on a free port, its root's URL, each request answered by handler_class (the tests'
    rewrites the sitemap); threading, as one request at a time would hold the chart libraries back behind
    the search index, as no web server does."""
    handler = functools.partial(handler_class, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown()
            thread.join()
