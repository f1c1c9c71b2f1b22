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


@pytest.fixture(autouse=True)
def _own_default_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's default store (``$AIEVAL_DB``) is its own file, never ``./aieval.db``.

    A judge called outside a run caches deterministic answers in the default store, and a
    loopback server's port can come back in a later test: a shared file would answer one test's
    judge with another test's reply.
    """
    monkeypatch.setenv("AIEVAL_DB", str(tmp_path_factory.mktemp("store") / "aieval.db"))


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A loopback OpenAI/Anthropic-compatible server; script it with ``enqueue``/``responder``."""
    with OpenAIServer() as server:
        yield server
