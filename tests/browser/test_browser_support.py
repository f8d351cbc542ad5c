"""The browser tests' own helpers (tests/support/browser.py), judged on a blank page."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from support.browser import evaluate_within

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


def test_a_script_that_never_settles_ends_at_the_deadline(browser: Browser) -> None:
    page = browser.new_page()
    try:
        with pytest.raises(sync_api.TimeoutError):
            evaluate_within(page, "async () => { await new Promise(() => {}); }", timeout_ms=500)
    finally:
        page.close()


def test_a_falsy_result_is_returned_at_once(browser: Browser) -> None:
    page = browser.new_page()
    try:
        assert evaluate_within(page, "async () => []", timeout_ms=5_000) == []
        assert evaluate_within(page, "async () => null", timeout_ms=5_000) is None
        assert evaluate_within(page, "async () => ({n: 2})", timeout_ms=5_000) == {"n": 2}
    finally:
        page.close()
