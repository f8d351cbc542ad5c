"""The machine picker of the articles, in Chromium: it lists every measured machine, starts on the one with
the most of the article's data, choosing one points its link at that machine's page (the article's section
there) without leaving the article, and the link opens the page with the machine's own charts drawn. The
choice in the URL, after reload and Back: test_machine_picker_url_browser.py.

Needs a built site and Chromium, as test_site_browser.py; otherwise the tests are skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.browser import FIGURE, Watched, wait_for_charts

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

ARTICLES = ("articles/too-many-connections/", "articles/pool-sizing/")
PICKER = "nav.connlab-picker"


@pytest.fixture(scope="module")
def measured_machines(built_site: Path) -> list[str]:
    # The site's build folder holds the data it was rendered from.
    machines = json.loads((built_site.parent / "data" / "machines.json").read_text())
    measured = sorted(str(m["id"]) for m in machines if not m["published"])
    if not measured:
        pytest.skip("no measured machine in the built site")
    return measured


def picker_state(page: Page) -> tuple[list[str], str, str]:
    options = page.locator(f"{PICKER} select option").all_inner_texts()
    link = page.locator(f"{PICKER} a.connlab-picker__open")
    return options, str(link.get_attribute("href")), link.inner_text()


def picker_default(page: Page) -> str:
    """The machine the picker starts on: its list's entry marked default, else the first."""
    listed = json.loads(str(page.locator(PICKER).get_attribute("data-machines")))
    return str(next((m for m in listed if m.get("default")), listed[0])["id"])


def page_of(href: str) -> str:
    """A link's page, without the section it lands on."""
    return href.split("#")[0]


@pytest.mark.parametrize("article", ARTICLES)
def test_the_picker_lists_every_measured_machine(
    watched: Watched,
    site_url: str,
    article: str,
    measured_machines: list[str],
) -> None:
    page = watched.page
    page.goto(site_url + article, wait_until="load")
    options, href, text = picker_state(page)
    assert sorted(options) == measured_machines
    default = picker_default(page)
    assert page_of(href).endswith(f"machines/{default}/") and text == f"Open {default}"
    assert page.locator(f"{PICKER} select").evaluate("s => s.options[s.selectedIndex].textContent") == default
    # The picker has a visible label naming what it chooses.
    assert page.get_by_label("Each machine's figures, tables and charts are on its own page").count() == 1
    watched.assert_clean()


def test_choosing_a_machine_points_the_link_and_opens_its_page(
    watched: Watched,
    site_url: str,
    measured_machines: list[str],
) -> None:
    page = watched.page
    page.goto(site_url + ARTICLES[0], wait_until="load")
    # The picker's script runs with the page's other scripts, once the charts are drawn: a choice made
    # before then would reach no listener (a loaded machine draws them late).
    wait_for_charts(watched)
    chosen = measured_machines[-1]
    page.locator(f"{PICKER} select").select_option(label=chosen)
    _options, href, text = picker_state(page)
    assert page_of(href).endswith(f"machines/{chosen}/") and text == f"Open {chosen}"
    assert page.url.split("?")[0].endswith(ARTICLES[0]), "choosing alone must not leave the article"
    page.locator(f"{PICKER} a.connlab-picker__open").click()
    page.wait_for_url(re.compile(rf"/machines/{re.escape(chosen)}/(#.*)?$"))
    page.wait_for_function(f"() => document.querySelector('h1')?.textContent.includes({json.dumps(chosen)})")
    wait_for_charts(watched)
    ids = page.eval_on_selector_all(FIGURE, "figures => figures.map(f => f.id)")
    assert ids and all(chosen in chart_id for chart_id in ids), ids
    watched.assert_clean()


def test_the_article_shows_no_machine_detail(
    watched: Watched,
    site_url: str,
    measured_machines: list[str],
) -> None:
    page = watched.page
    page.goto(site_url + ARTICLES[0], wait_until="load")
    wait_for_charts(watched)
    ids = page.eval_on_selector_all(FIGURE, "figures => figures.map(f => f.id)")
    # Charts across machines only: each machine's detail is on its own page.
    assert ids == ["chart-tmc-normalised", "chart-tmc-latency-across", "chart-tmc-peaks-by-cores"]
    watched.assert_clean()


@pytest.mark.parametrize("watched", [False], ids=["no-js"], indirect=True)
def test_without_javascript_the_picker_hides_its_empty_select_and_links_the_default_machine(
    watched: Watched,
    site_url: str,
    measured_machines: list[str],
) -> None:
    """The machines come as a JSON list that picker.js makes options of: without it, no empty select is
    shown, and the link still opens the default machine's page (the one with most of the article's data)."""
    page = watched.page
    page.goto(site_url + ARTICLES[0], wait_until="load")
    select = page.locator(f"{PICKER} select")
    assert select.count() == 1 and not select.is_visible()
    assert select.locator("option").count() == 0
    link = page.locator(f"{PICKER} a.connlab-picker__open")
    default = picker_default(page)
    assert default in measured_machines
    assert link.is_visible() and link.inner_text() == f"Open {default}"
    link.click()
    page.wait_for_url(re.compile(rf"/machines/{re.escape(default)}/(#.*)?$"))
    watched.assert_clean()
