"""Fixtures shared by the whole test suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings
from tests.support.openai_server import OpenAIServer

# CI machines are shared and small: a property's correctness must not depend on a 200 ms
# per-example deadline that a busy neighbour can blow.
settings.register_profile("aieval", deadline=None)
settings.load_profile("aieval")


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A loopback OpenAI/Anthropic-compatible server; script it with ``enqueue``/``responder``."""
    with OpenAIServer() as server:
        yield server
