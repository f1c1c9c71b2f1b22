"""Tool calls in an OpenAI-compatible answer: parsed verbatim, kept by the response cache."""

from __future__ import annotations

import pytest
from tests.support.openai_server import Malformed, OpenAIServer, Reply

from aieval.core import ToolCall
from aieval.errors import ProviderResponseError
from aieval.providers import CachedProvider, ChatRequest, OpenAIProvider

CALLS = (("call_1", "lookup", '{"id": 7, "note": "ünï"}'), ("call_2", "refund", "{}"))


def _request() -> ChatRequest:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    return ChatRequest(
        "m", [{"role": "user", "content": "hi"}], temperature=0, params={"tools": tools}
    )


async def test_tool_calls_are_parsed_and_a_calls_only_message_has_empty_text(
    openai_server: OpenAIServer,
) -> None:
    openai_server.enqueue(Reply("", tool_calls=CALLS))
    provider = OpenAIProvider(openai_server.base_url)
    try:
        response = await provider.generate(_request())
    finally:
        await provider.aclose()
    assert response.text == ""
    assert response.tool_calls == tuple(ToolCall(*call) for call in CALLS)
    assert openai_server.requests[0].body["tools"][0]["function"]["name"] == "lookup"


async def test_malformed_tool_calls_are_a_response_error(openai_server: OpenAIServer) -> None:
    body = b'{"choices": [{"message": {"content": null, "tool_calls": [{"id": 1}]}}]}'
    openai_server.enqueue(Malformed(body))
    provider = OpenAIProvider(openai_server.base_url)
    try:
        with pytest.raises(ProviderResponseError, match="malformed tool_calls"):
            await provider.generate(_request())
    finally:
        await provider.aclose()


async def test_a_cached_answer_keeps_its_tool_calls(openai_server: OpenAIServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    openai_server.enqueue(Reply("", tool_calls=CALLS))
    cached = CachedProvider(OpenAIProvider(openai_server.base_url), tmp_path / "cache.db")
    try:
        first = await cached.generate(_request())
        second = await cached.generate(_request())
    finally:
        await cached.aclose()
    assert second.cached is True
    assert second.tool_calls == first.tool_calls == tuple(ToolCall(*call) for call in CALLS)
    assert len(openai_server.requests) == 1
