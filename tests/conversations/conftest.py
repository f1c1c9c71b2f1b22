from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.conversations._fake import Fake
from tests.support.openai_server import OpenAIServer


@pytest.fixture
async def fake(openai_server: OpenAIServer) -> AsyncIterator[Fake]:
    """The scripted model on loopback; its providers are closed after the test."""
    made = Fake(openai_server)
    yield made
    await made.aclose()
