"""Calling a provider once from a synchronous test and catching the error it fails with."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

import pytest

from aieval.providers import ChatRequest, Provider

E = TypeVar("E", bound=BaseException)


def request_error(build: Callable[[], Provider], request: ChatRequest, kind: type[E]) -> E:
    """Build a provider (inside the event loop), send ``request`` once and return the ``kind``
    error it fails with (the test fails if it does not); the provider is closed either way."""

    async def call() -> E:
        provider = build()
        try:
            with pytest.raises(kind) as caught:
                await provider.generate(request)
            return caught.value
        finally:
            await provider.aclose()

    return asyncio.run(call())
