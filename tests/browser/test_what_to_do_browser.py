""" "What to do" in Chromium: at desktop and phone sizes it opens each article with a number on the first
screen, picking 8 server cores changes the number, and without JavaScript the table by core count shows.
Screenshots of the first screen go to build/screenshots/what-to-do-*.png. Skipped without Chromium.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from connlab.paths import SCREENSHOTS_DIR
from connlab.site.render.advice import ADVISED_ARTICLES, CORE_CHOICES
from support.browser import Watched

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

SCREENS = {"desktop": (1280, 900), "phone": (390, 844)}
# The articles whose answer scales with the server's cores (Four poolers ranks poolers instead).
BY_CORES = tuple(slug for slug in ADVISED_ARTICLES if slug != "four-poolers")
# The chosen core count's number, or Four poolers' recommendation.
SHOWN_NUMBER = ", ".join(
    f"{box} .connlab-advice__number"
    for box in (".connlab-advice__answer:not([hidden])", ".connlab-advice > ul")
)

HEADING_AND_NUMBER_JS = """
(selector) => {
  const heading = document.getElementById("what-to-do");
  const number = [...document.querySelectorAll(selector)].find(n => n.offsetParent !== null);
  if (!heading || !number) return null;
  return {heading: heading.getBoundingClientRect().top, top: number.getBoundingClientRect().top,
          bottom: number.getBoundingClientRect().bottom, text: number.innerText, height: window.innerHeight};
}
"""


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("slug", ADVISED_ARTICLES)
def test_what_to_do_with_a_number_is_on_the_first_screen(
    browser: Browser, site_url: str, slug: str, screen: str
) -> None:
    width, height = SCREENS[screen]
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"{site_url}articles/{slug}/", wait_until="load")
        shown = page.evaluate(HEADING_AND_NUMBER_JS, SHOWN_NUMBER)
        assert shown is not None, "no 'What to do' with a number"
        assert 0 <= shown["heading"] < shown["top"] and shown["bottom"] <= shown["height"], shown
        assert re.search(r"\d", shown["text"]), shown
        SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS_DIR / f"what-to-do-{slug}-{width}.png"))
    finally:
        page.close()


@pytest.mark.parametrize("slug", BY_CORES)
def test_picking_eight_server_cores_changes_the_number(watched: Watched, site_url: str, slug: str) -> None:
    page = watched.page
    page.goto(f"{site_url}articles/{slug}/", wait_until="load")
    select = page.get_by_label("Your server's cores:")
    assert select.is_visible()
    number = page.locator(".connlab-advice__answer:not([hidden]) .connlab-advice__number")
    select.select_option("1")
    on_one = number.inner_text()
    assert page.locator(".connlab-advice__table tbody tr:visible").count() == 1
    select.select_option("8")
    on_eight = number.inner_text()
    assert re.search(r"\d", on_eight) and on_eight != on_one, (on_one, on_eight)
    assert page.locator(".connlab-advice__table tbody tr:visible td").first.inner_text() == "8"
    watched.assert_clean()


POOL_SETTING = re.compile(r"^default_pool_size = (\d+)$", re.M)


@pytest.mark.parametrize("slug", BY_CORES)
def test_picking_eight_server_cores_changes_the_fragments_default_pool_size(
    watched: Watched, site_url: str, slug: str
) -> None:
    """The configuration shown follows the select: its pgbouncer.ini pool and the application pools are the
    chosen core count's, the table row's pool."""
    page = watched.page
    page.goto(f"{site_url}articles/{slug}/", wait_until="load")
    select = page.get_by_label("Your server's cores:")
    fragment = page.locator(".connlab-advice__config:not([hidden]) pre")
    pools = {}
    for cores in ("1", "8"):
        select.select_option(cores)
        assert fragment.count() == 1 and fragment.is_visible()
        text = fragment.inner_text()
        found = POOL_SETTING.search(text)
        assert found is not None, text
        pools[cores] = found.group(1)
        assert f"new Pool({{ max: {pools[cores]} }})" in text and f"maximumPoolSize={pools[cores]}" in text
    assert pools["1"] != pools["8"], pools
    # The one configuration shown is the chosen core count's.
    assert page.locator(".connlab-advice__config:not([hidden])").get_attribute("data-cores") == "8"
    watched.assert_clean()


@pytest.mark.parametrize("watched", [False], ids=["no-js"], indirect=True)
def test_without_javascript_the_table_by_core_count_shows_every_row(watched: Watched, site_url: str) -> None:
    page = watched.page
    page.goto(f"{site_url}articles/{BY_CORES[0]}/", wait_until="load")
    assert not page.locator(".connlab-advice__pick").is_visible()
    cells = page.locator(".connlab-advice__table tbody tr:visible td:first-child").all_inner_texts()
    assert cells == [str(cores) for cores in CORE_CHOICES]
    # The default core count's answer is the one shown.
    assert page.locator(".connlab-advice__answer:not([hidden])").count() == 1
    watched.assert_clean()
