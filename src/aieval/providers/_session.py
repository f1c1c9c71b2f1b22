"""One aiohttp session per event loop, for a provider that speaks HTTP itself."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

__all__ = ["LoopSession"]


class LoopSession:
    """The session of the running event loop, made by ``make`` on first use.

    A session belongs to the loop it was made in; a sync ``run()`` makes a fresh loop per call,
    so a session from an earlier loop is dropped rather than reused.
    """

    def __init__(self, make: Callable[[], aiohttp.ClientSession]) -> None:
        self._make = make
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> aiohttp.ClientSession:
        """The running loop's open session (a new one when there is none yet)."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._session, self._loop = self._make(), loop
        return self._session

    async def aclose(self) -> None:
        """Close the session; a later :meth:`get` opens a new one."""
        session, self._session, self._loop = self._session, None, None
        if session is not None and not session.closed:
            await session.close()
