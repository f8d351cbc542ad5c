"""The article's two views (connlab.site.layout): facts cut per machine, links between pages, the picker."""

from __future__ import annotations

import pytest

from connlab.site.layout import machine_page, page_url, picker_options
from connlab.site.render.views import ACROSS_MACHINE_FACTS, FactsIndex

FACTS = {
    "points": [
        {"machine": "a", "clients": 1},
        {"machine": "b", "clients": 1},
        {"machine": "a", "clients": 2},
        {"machine": "published-x", "clients": 1},
    ],
    "normalised": [{"machine": "a", "share": 1.0}, {"machine": "b", "share": 0.5}],
    "experiments": [{"experiment": "clients-sweep"}],  # names no machine: the same in every view
    "empty": [],
}


def test_a_machine_view_holds_that_machine_alone() -> None:
    view = FactsIndex(FACTS).for_machine("a")
    assert view["points"] == [{"machine": "a", "clients": 1}, {"machine": "a", "clients": 2}]
    assert view["normalised"] == [{"machine": "a", "share": 1.0}]
    assert view["experiments"] == FACTS["experiments"]
    assert view["empty"] == []
    assert FactsIndex(FACTS).for_machine("nobody")["points"] == []


def test_the_article_view_keeps_cross_machine_facts_and_published_figures() -> None:
    assert "normalised" in ACROSS_MACHINE_FACTS
    view = FactsIndex(FACTS).across(measured={"a", "b"})
    assert view["normalised"] == FACTS["normalised"]
    assert view["points"] == [{"machine": "published-x", "clients": 1}]
    assert view["experiments"] == FACTS["experiments"]


def test_counts_are_over_every_machine() -> None:
    assert FactsIndex(FACTS).counts() == {"points": 4, "normalised": 2, "experiments": 1, "empty": 0}


def test_links_between_pages_follow_directory_urls() -> None:
    assert machine_page("box-1") == "machines/box-1.md"
    assert page_url("articles/too-many-connections.md", "machines/box-1.md") == "../../machines/box-1/"
    assert page_url("machines.md", "machines/box-1.md") == "box-1/"
    assert page_url("index.md", "machines/box-1.md") == "machines/box-1/"


def test_the_picker_lists_measured_machines_only() -> None:
    machines = [{"id": "a", "published": False}, {"id": "published-x", "published": True}]
    assert picker_options("articles/pool-sizing.md", machines) == [{"id": "a", "url": "../../machines/a/"}]


@pytest.mark.parametrize(
    "page", ["index.md", "machines.md", "machines/index.md", "machines/other.md", "articles/pool-sizing.md"]
)
def test_the_pickers_urls_are_the_links_between_the_pages(page: str) -> None:
    machines = [{"id": "a-1"}, {"id": "b-2", "published": False}]
    expected = [{"id": m["id"], "url": page_url(page, machine_page(m["id"]))} for m in machines]
    assert picker_options(page, machines) == expected
