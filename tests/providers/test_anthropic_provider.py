"""AnthropicProvider through the real anthropic SDK against the loopback /v1/messages."""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.support.openai_server import Hang, Malformed, OpenAIServer, Reply, Status

from aieval.errors import (
    ConfigError,
    ProviderAuthError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)
from aieval.providers import AnthropicProvider, ChatRequest, ResilientProvider, RetryPolicy

# skipped without the SDK, which is imported only when a test runs: each xdist worker collects
# this module, and importing anthropic there would cost each ~1 s of CPU
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("anthropic") is None, reason="the anthropic SDK is not installed"
)

KEY = "sk-ant-test-secret-9876"


@pytest.fixture
async def provider(openai_server: OpenAIServer) -> AsyncIterator[AnthropicProvider]:
    p = AnthropicProvider(KEY, base_url=openai_server.root_url, timeout=5.0)
    yield p
    await p.aclose()


def _request(**kwargs: Any) -> ChatRequest:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "Answer in English."},
        {"role": "user", "content": "name a colour"},
    ]
    return ChatRequest(model="claude-test", messages=messages, **kwargs)


async def test_answer_usage_and_finish(
    provider: AnthropicProvider, openai_server: OpenAIServer
) -> None:
    openai_server.enqueue(Reply("blue", usage=(11, 1), finish_reason="length"))
    response = await provider.generate(_request())
    assert response.text == "blue"
    assert (response.input_tokens, response.output_tokens) == (11, 1)
    assert response.finish_reason == "length"
    assert response.model == "claude-test"


async def test_request_shape(provider: AnthropicProvider, openai_server: OpenAIServer) -> None:
    schema = {"type": "object", "properties": {"c": {"type": "string"}}}
    request = _request(
        temperature=0, response_schema=schema, params={"seed": 3, "stop": "END", "top_k": 5}
    )
    await provider.generate(request)
    (seen,) = openai_server.requests
    assert seen.path == "/v1/messages"
    # SDK versions differ in the header they use for the key.
    sent_key = seen.headers.get("x-api-key") or seen.headers["Authorization"].split()[-1]
    assert sent_key == KEY
    body = seen.body
    assert body["system"] == "Be brief.\n\nAnswer in English."
    assert body["messages"] == [{"role": "user", "content": "name a colour"}]
    assert body["max_tokens"] == 1024
    assert body["temperature"] == 0
    assert body["stop_sequences"] == ["END"]
    assert body["top_k"] == 5
    assert "seed" not in body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        pytest.param(400, ProviderHTTPError, id="400"),
        pytest.param(401, ProviderAuthError, id="401"),
        pytest.param(429, RateLimitError, id="429"),
        pytest.param(500, ProviderServerError, id="500"),
        pytest.param(529, ProviderServerError, id="529-overloaded"),
    ],
)
async def test_errors_map_like_openai(
    provider: AnthropicProvider,
    openai_server: OpenAIServer,
    status: int,
    error_type: type[Exception],
) -> None:
    openai_server.enqueue(Status(status, headers={"retry-after": "2"}))
    with pytest.raises(error_type) as info:
        await provider.generate(_request())
    assert f"test server error {status}" in str(info.value)
    assert len(openai_server.requests) == 1  # the SDK's own retries are off
    if isinstance(info.value, RateLimitError):
        assert info.value.retry_after == 2.0


async def test_key_is_redacted(provider: AnthropicProvider, openai_server: OpenAIServer) -> None:
    body = {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}
    openai_server.enqueue(Status(401, json_body=body))
    with pytest.raises(ProviderAuthError) as info:
        await provider.generate(_request())
    assert KEY not in "".join(traceback.format_exception(info.value))
    assert KEY not in repr(provider)


async def test_hang_times_out(openai_server: OpenAIServer) -> None:
    provider = AnthropicProvider(KEY, base_url=openai_server.root_url, timeout=0.3)
    openai_server.enqueue(Hang())
    started = time.monotonic()
    try:
        with pytest.raises(ProviderTimeoutError):
            await provider.generate(_request())
    finally:
        await provider.aclose()
    # the server never answers, so the error itself shows the timeout fired; the bounds only
    # show it was this timeout (not an earlier failure, not a much later one)
    assert 0.3 <= time.monotonic() - started < 10.0


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"<html>oops</html>", id="html"),
        pytest.param(b'{"type": "message", "content": []}', id="no-text"),
        pytest.param(b'{"type": "mess', id="truncated"),
    ],
)
async def test_malformed_bodies(
    provider: AnthropicProvider, openai_server: OpenAIServer, raw: bytes
) -> None:
    openai_server.enqueue(Malformed(raw))
    with pytest.raises(ProviderResponseError):
        await provider.generate(_request())


async def test_retried_through_the_resilient_wrapper(openai_server: OpenAIServer) -> None:
    inner = AnthropicProvider(KEY, base_url=openai_server.root_url)
    provider = ResilientProvider(inner, RetryPolicy(initial_delay=0.01))
    openai_server.enqueue(Status(429, headers={"retry-after": "0.1"}), Status(503))
    try:
        response = await provider.generate(_request())
    finally:
        await provider.aclose()
    assert response.retries == 2
    assert response.text == "echo: name a colour"


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes the import fail
    with pytest.raises(ConfigError, match=r"pip install 'aieval\[anthropic\]'"):
        AnthropicProvider(KEY)
