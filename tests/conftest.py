"""Fixtures shared by the whole test suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.openai_server import OpenAIServer


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A loopback OpenAI/Anthropic-compatible server; script it with ``enqueue``/``responder``."""
    with OpenAIServer() as server:
        yield server
