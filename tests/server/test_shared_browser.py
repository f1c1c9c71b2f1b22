"""The viewer tests' shared Chromium (``tests/support/browser.py``): one per worker, lent to each
browser module in turn, and out of the way of the other modules' event loops in between; a
watched page fails its test on what the viewer must never do."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.support.browser import Chromium, PageWatch, require_chromium, watched_page

require_chromium()


def test_between_browser_modules_the_others_run_their_own_event_loops(
    _chromium: Chromium,
) -> None:
    browser = _chromium.lend()
    try:
        browser.new_context().close()  # a Playwright call marks its loop as running
    finally:
        _chromium.put_away()
    # as an async test or an asyncio.run in the next module does ("Cannot run the event loop
    # while another loop is running" while Playwright's loop is marked running)
    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"
    again = _chromium.lend()
    try:
        assert again is browser  # the worker's one Chromium, not a second one
        tab = again.new_page()
        tab.set_content("<p>still here</p>")
        assert tab.inner_text("p") == "still here"
        tab.close()
    finally:
        _chromium.put_away()


async def test_an_async_test_after_a_browser_module_runs() -> None:
    assert await asyncio.sleep(0, result="ran") == "ran"


def test_a_watched_page_fails_on_a_request_outside_loopback(browser: Any) -> None:
    with (
        pytest.raises(AssertionError, match=r"outside 127\.0\.0\.1: \['http://203\.0\.113\.9/"),
        watched_page(browser, PageWatch(console=False)) as tab,
    ):
        tab.set_content('<img src="http://203.0.113.9/x.png">')


def test_a_watched_page_fails_on_a_script_error_and_a_console_error(browser: Any) -> None:
    with (
        pytest.raises(AssertionError, match=r"errors in the page: .*boom"),
        watched_page(browser, PageWatch(console=False)) as tab,
    ):
        tab.add_script_tag(content="throw new Error('boom')")
    with (
        pytest.raises(AssertionError, match=r"errors in the page: .*said so"),
        watched_page(browser) as tab,
    ):
        tab.evaluate("console.error('said so')")
    with watched_page(browser, PageWatch(console_allows=("said so",))) as tab:
        tab.evaluate("console.error('said so')")
