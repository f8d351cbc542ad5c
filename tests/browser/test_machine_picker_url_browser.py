"""The machine picker's choice in the page's URL, and links that land on a machine page's section, in
Chromium at a phone's size (390×844) and a desktop's (1280×900).

The choice goes into the URL as ?machine=<id> (no history entry of its own), survives a reload and Back, and
after Back the select and its link show the same machine; the pool-sizing simulator's machine selector
follows the same choice. An article's link to a machine's verdicts lands on that section, in view. With and
without Material's instant navigation. Needs a built site and Chromium, as test_site_browser.py; otherwise
the tests are skipped.
"""

from __future__ import annotations

import html as html_module
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.browser import TIMEOUT_MS, Watched, wait_for_charts

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

SCREENS = {"phone": (390, 844), "desktop": (1280, 900)}
PICKER = "nav.connlab-picker"
ARTICLE = "articles/pool-sizing/"
SIMULATOR = "select.connlab-switch__select"

# What the picker shows: the select's chosen machine, the link's machine and href, the page's ?machine=.
PICKER_STATE_JS = """
() => {
  const nav = document.querySelector("nav.connlab-picker");
  const select = nav.querySelector("select");
  const link = nav.querySelector("a.connlab-picker__open");
  const chosen = select.options[select.selectedIndex];
  return {
    select: chosen ? chosen.textContent : null,
    selectUrl: chosen ? chosen.value : null,
    link: link.textContent.replace(/^Open /, ""),
    href: link.getAttribute("href"),
    url: new URL(location.href).searchParams.get("machine"),
  };
}
"""
# The element an URL's fragment names: where it is against the viewport.
TARGET_IN_VIEW_JS = """
() => {
  const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!target) return null;
  const box = target.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, height: window.innerHeight};
}
"""


def picker_entries(built_site: Path) -> list[dict]:
    """The pool-sizing article's picker entries, as the built page lists them."""
    html = (built_site / ARTICLE / "index.html").read_text(encoding="utf-8")
    found = re.search(r"<nav class=\"connlab-picker\"[^>]*data-machines='([^']*)'", html)
    assert found, "the article has no picker"
    return json.loads(html_module.unescape(found[1]))


@pytest.fixture(scope="module")
def entries(built_site: Path) -> list[dict]:
    listed = picker_entries(built_site)
    if len(listed) < 2:
        pytest.skip("the built site has fewer than two measured machines")
    return listed


def default_of(listed: list[dict]) -> dict:
    return next((e for e in listed if e.get("default")), listed[0])


def other_than_default(listed: list[dict]) -> dict:
    """A machine with the article's data (its page has the article's section), not the default."""
    default = default_of(listed)
    return next(e for e in reversed(listed) if e is not default and "#" in e["url"])


@pytest.fixture(params=list(SCREENS))
def screen_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Watched]:
    width, height = SCREENS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height}, service_workers="block")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    page.on("pageerror", lambda err: watched.page_errors.append(str(err)))
    page.on("console", lambda msg: msg.type == "error" and watched.console_errors.append(msg.text))
    try:
        yield watched
    finally:
        context.close()


def state(page: Page) -> dict:
    page.wait_for_function("() => !document.querySelector('nav.connlab-picker select').hidden")
    return page.evaluate(PICKER_STATE_JS)


def assert_shows(shown: dict, machine: dict) -> None:
    """The select and the link agree, on `machine`."""
    assert shown["select"] == shown["link"] == machine["id"], shown
    assert shown["selectUrl"] == shown["href"] == machine["url"], shown


def choose(page: Page, machine: dict) -> None:
    page.locator(f"{PICKER} select").select_option(label=machine["id"])


def test_the_picker_starts_on_the_machine_with_most_of_the_articles_data(
    screen_page: Watched, site_url: str, entries: list[dict]
) -> None:
    page = screen_page.page
    page.goto(site_url + ARTICLE, wait_until="load")
    shown = state(page)
    assert_shows(shown, default_of(entries))
    assert shown["url"] is None, "nothing chosen yet: the URL names no machine"
    screen_page.assert_clean()


@pytest.mark.parametrize("instant", [False, True], ids=["plain", "instant"])
def test_the_choice_is_in_the_url_and_survives_reload_and_back(
    request: pytest.FixtureRequest, screen_page: Watched, instant: bool, entries: list[dict]
) -> None:
    base = request.getfixturevalue("instant_site_url" if instant else "site_url")
    page = screen_page.page
    page.goto(base + ARTICLE, wait_until="load")
    wait_for_charts(screen_page)
    chosen = other_than_default(entries)
    choose(page, chosen)
    shown = state(page)
    assert_shows(shown, chosen)
    assert shown["url"] == chosen["id"] and page.url.endswith(f"{ARTICLE}?machine={chosen['id']}")
    # A reload (a shared link) shows the choice.
    page.reload(wait_until="load")
    assert_shows(state(page), chosen)
    # Off to the machine's page by the link, then Back: the choice, the select and the link agree.
    page.locator(f"{PICKER} a.connlab-picker__open").click()
    page.wait_for_url(re.compile(rf"/machines/{re.escape(chosen['id'])}/#"))
    page.go_back(wait_until="load")
    page.wait_for_url(re.compile(rf"/{re.escape(ARTICLE)}\?machine={re.escape(chosen['id'])}$"))
    page.wait_for_function(
        "(id) => { const s = document.querySelector('nav.connlab-picker select');"
        " return s && !s.hidden && s.options[s.selectedIndex]?.textContent === id; }",
        arg=chosen["id"],
    )
    shown = state(page)
    assert_shows(shown, chosen)
    assert shown["url"] == chosen["id"]
    screen_page.assert_clean()


def test_the_simulator_follows_the_choice_and_an_unknown_machine_is_ignored(
    screen_page: Watched, site_url: str, entries: list[dict]
) -> None:
    page = screen_page.page
    page.goto(site_url + ARTICLE + "?machine=no-such-machine", wait_until="load")
    assert_shows(state(page), default_of(entries))
    simulator = page.locator(SIMULATOR)
    machines = simulator.locator("option").evaluate_all("options => options.map(o => o.value)")
    picked = [e for e in entries if e["id"] in machines]
    if len(machines) < 2 or not picked:
        pytest.skip("the simulator offers fewer than two machines")
    # The URL's machine chooses the simulator's panel as well as the picker's machine.
    target = next(e for e in reversed(picked) if e["id"] != machines[0]) if len(picked) > 1 else picked[0]
    page.goto(site_url + ARTICLE + f"?machine={target['id']}", wait_until="load")
    assert_shows(state(page), target)
    assert simulator.input_value() == target["id"]
    panel = page.locator(f'.connlab-switch__panel[data-machine="{target["id"]}"]')
    assert panel.is_visible()
    assert page.locator(".connlab-switch__panel:visible").count() == 1
    # Choosing in the simulator writes the URL and moves the picker with it.
    other = next(m for m in machines if m != target["id"])
    simulator.select_option(other)
    assert new_url_machine(page) == other
    entry = next((e for e in entries if e["id"] == other), None)
    if entry is not None:
        assert_shows(state(page), entry)
    page.reload(wait_until="load")
    assert simulator.input_value() == other
    screen_page.assert_clean()


def new_url_machine(page: Page) -> str | None:
    return page.evaluate("() => new URL(location.href).searchParams.get('machine')")


def test_a_link_to_a_machines_verdicts_lands_on_its_section(
    screen_page: Watched, site_url: str, entries: list[dict]
) -> None:
    page = screen_page.page
    page.goto(site_url + ARTICLE, wait_until="load")
    link = page.locator('a[href*="/machines/"][href$="#pool-sizing-claims"]').first
    assert link.count() == 1, "no link from the article to a machine's verdicts"
    href = str(link.get_attribute("href"))
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_url(re.compile(r"/machines/[^/]+/#pool-sizing-claims$"))
    page.wait_for_load_state("load")
    wait_for_charts(screen_page)
    placed = page.evaluate(TARGET_IN_VIEW_JS)
    assert placed is not None, f"{href}: no element with the fragment's id"
    assert 0 <= placed["top"] < placed["height"], placed
    assert page.locator("#pool-sizing-claims").inner_text().startswith("Do the source article")
    screen_page.assert_clean()
