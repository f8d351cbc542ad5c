"""What an article weighs, and how its charts are drawn at a 4x CPU slowdown (issue 54).

Every article's HTML is at most 600 KB. How soon the first chart is drawn is not judged here: a timed test
fails on a slow machine, not on slow code, so the time is what scripts/bench/page_weight.py prints
(docs/PERFORMANCE.md). What is judged is what makes the first chart come early: with Chromium's CPU slowed
four times (the DevTools protocol's Emulation.setCPUThrottlingRate), charts.js draws the charts one at a
time, the nearest the reader's view first (a chart not shown, in a tab not chosen, last), and every chart is
drawn in the end, with nothing reported in the console.

The site is built from the pinned results (conftest's `built_site`, or CONNLAB_SITE_DIR).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from connlab.site.render.articles import load_articles
from support.browser import Watched, wait_for_charts

# Every article the registry declares (site_src/articles/articles.yaml), so that none goes unweighed.
ARTICLES = tuple(article.slug for article in load_articles())
# Issue 54: an article's HTML at most 600 KB (1 KB = 1,000 bytes).
HTML_LIMIT_BYTES = 600_000
CPU_SLOWDOWN = 4

# Run before the page's own scripts: each figure's id, in the order charts.js marked it drawn.
DRAWN_ORDER_JS = """(() => {
  window.__connlabDrawn = [];
  new MutationObserver(records => records.forEach(record => {
    const figure = record.target;
    if (figure.hasAttribute("data-rendered-scheme") && !window.__connlabDrawn.includes(figure.id)) {
      window.__connlabDrawn.push(figure.id);
    }
  })).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-rendered-scheme"]});
})()"""

# The order charts.js is to draw them in, from the page at its top: by how far each is below the first
# screen (side by side: the page's order), the figures not shown last.
NEAREST_FIRST_JS = """
() => {
  const figures = [...document.querySelectorAll("figure.connlab-chart")];
  const shown = figures.filter(f => f.offsetParent !== null);
  const top = f => f.getBoundingClientRect().top;
  return [...shown.sort((a, b) => Math.max(0, top(a) - innerHeight) - Math.max(0, top(b) - innerHeight)),
          ...figures.filter(f => f.offsetParent === null)].map(f => f.id);
}
"""


@pytest.mark.parametrize("article", ARTICLES)
def test_an_articles_html_is_at_most_600_kb(built_site: Path, article: str) -> None:
    page = built_site / "articles" / article / "index.html"
    assert page.stat().st_size <= HTML_LIMIT_BYTES, f"{page}: {page.stat().st_size:,} bytes"


@pytest.mark.browser
@pytest.mark.parametrize("article", ARTICLES)
def test_at_a_4x_cpu_slowdown_the_nearest_chart_is_drawn_first(
    watched: Watched, site_url: str, article: str
) -> None:
    page = watched.page
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    page.add_init_script(DRAWN_ORDER_JS)
    page.goto(f"{site_url}articles/{article}/", wait_until="load")
    wait_for_charts(watched)
    drawn = page.evaluate("() => window.__connlabDrawn")
    expected = page.evaluate(NEAREST_FIRST_JS)
    assert drawn == expected, f"drawn {drawn}, nearest first {expected}"
    watched.assert_clean()
