"""The viewer's browser tests' Chromium: one per xdist worker, and a watched page per test.

Playwright's sync API runs its asyncio loop in a greenlet of the main thread, and after every
call marks that loop as the thread's running loop: while a Playwright is alive, an async test
or an ``asyncio.run`` of another module on the same worker fails ("Cannot run the event loop
while another loop is running"). Starting the driver and Chromium costs about two seconds a
module, so :class:`Chromium` starts them once, when the worker's first browser module asks, and
marks Playwright's loop as running only while a module using the browser runs (``lend``), not
between those modules (``put_away``). ``tests/server/conftest.py`` imports the fixtures below.

A browser test module starts with :func:`require_chromium` (skipped, with the reason, when
Playwright or Chromium is missing) and takes the ``page`` fixture, or opens its own pages with
:func:`watched_page` on the ``browser`` fixture.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "VIEWPORT",
    "Chromium",
    "PageWatch",
    "browser",
    "page",
    "page_watch",
    "require_chromium",
    "watched_page",
]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Screenshots the browser tests leave for a person to look at (not compared).
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
VIEWPORT = {"width": 1280, "height": 800}


def require_chromium() -> None:
    """Skip the calling test module when Playwright or Debian's Chromium is not installed."""
    pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip(
            "Chromium is not installed at /usr/bin/chromium (run scripts/browser.sh)",
            allow_module_level=True,
        )


class Chromium:
    """One Playwright driver and one Chromium, started on first use and kept for the session."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def lend(self) -> Any:
        """The browser, with Playwright's loop marked running again (its calls need that);
        a browser that has gone away (crashed) is started again."""
        if self._loop is not None:
            asyncio.events._set_running_loop(self._loop)
        if self._browser is not None and not self._browser.is_connected():
            self.close()
        if self._playwright is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
            )
            self._loop = asyncio.events._get_running_loop()
        return self._browser

    def put_away(self) -> None:
        """Unmark Playwright's loop: the next module's own event loops may run."""
        if self._loop is not None and asyncio.events._get_running_loop() is self._loop:
            asyncio.events._set_running_loop(None)

    def close(self) -> None:
        """Close the browser and stop the driver (the loop stops with it)."""
        if self._playwright is None:
            return
        if self._loop is not None:
            asyncio.events._set_running_loop(self._loop)
        try:
            if self._browser.is_connected():
                self._browser.close()
        finally:
            self._playwright.stop()
            self._playwright = self._browser = self._loop = None
            asyncio.events._set_running_loop(None)


@dataclass(frozen=True)
class PageWatch:
    """What fails a test besides its assertions: a request outside 127.0.0.1 always (it is
    blocked and counted) and an uncaught script error always; a console error when
    ``console`` is set, unless its text contains one of ``console_allows``."""

    console: bool = True
    console_allows: tuple[str, ...] = ()


@contextmanager
def watched_page(browser: Any, watch: PageWatch = PageWatch()) -> Iterator[Any]:
    """A 1280x800 page in a context of its own, whose requests may only reach 127.0.0.1.

    On leaving, the context is closed, then the test fails on any request outside 127.0.0.1 and
    on the errors ``watch`` names (after the test's own assertions: those fail first).
    """
    context = browser.new_context(viewport=VIEWPORT)
    outside: list[str] = []
    errors: list[str] = []

    def gate(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    def console(msg: Any) -> None:
        if msg.type == "error" and not any(text in msg.text for text in watch.console_allows):
            errors.append(msg.text)

    try:
        context.route("**/*", gate)
        tab = context.new_page()
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        if watch.console:
            tab.on("console", console)
        yield tab
    finally:
        context.close()
    assert outside == [], f"the viewer tried to reach outside 127.0.0.1: {outside}"
    assert errors == [], f"errors in the page: {errors}"


# The fixtures (``tests/server/conftest.py`` imports them; so may another folder's conftest).


@pytest.fixture(scope="session")
def _chromium() -> Iterator[Chromium]:
    """This worker's Playwright driver and Chromium, started when a module first asks."""
    chromium = Chromium()
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="module")
def browser(_chromium: Chromium) -> Iterator[Any]:
    """Chromium for this module's tests (the worker's own, shared with its other browser
    modules; Playwright's loop is marked running only while this module runs)."""
    require_chromium()
    try:
        yield _chromium.lend()
    finally:
        _chromium.put_away()


@pytest.fixture
def page_watch() -> PageWatch:
    """What fails a test on its ``page`` besides its assertions (a module may override this)."""
    return PageWatch()


@pytest.fixture
def page(browser: Any, page_watch: PageWatch) -> Iterator[Any]:
    """A 1280x800 page whose requests may only reach 127.0.0.1; the errors ``page_watch``
    names fail the test."""
    with watched_page(browser, page_watch) as tab:
        yield tab
