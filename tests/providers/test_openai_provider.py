"""OpenAIProvider against the real loopback server: one attempt, mapped results and errors."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import traceback

import pytest
from tests.support.openai_server import Hang, Malformed, OpenAIServer, Reply, Status

from aieval.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)
from aieval.providers import ChatRequest, OpenAIProvider

KEY = "sk-test-0123456789abcdef"


def _request(text: str = "hello world", **kwargs: object) -> ChatRequest:
    return ChatRequest(model="test-model", messages=[{"role": "user", "content": text}], **kwargs)  # type: ignore[arg-type]


@pytest.fixture
async def provider(openai_server: OpenAIServer):  # type: ignore[no-untyped-def]
    p = OpenAIProvider(openai_server.base_url, KEY, timeout=5.0)
    yield p
    await p.aclose()


async def test_answer_is_the_servers_reply(provider: OpenAIProvider) -> None:
    response = await provider.generate(_request("what is two plus two"))
    assert response.text == "echo: what is two plus two"
    assert response.cached is False
    assert response.retries == 0
    assert response.latency_s > 0


async def test_usage_finish_reason_and_model_are_mapped(
    provider: OpenAIProvider, openai_server: OpenAIServer
) -> None:
    openai_server.enqueue(Reply("cut", usage=(17, 5), finish_reason="length", model="served-m"))
    response = await provider.generate(_request())
    assert (response.input_tokens, response.output_tokens) == (17, 5)
    assert response.finish_reason == "length"
    assert response.model == "served-m"


async def test_request_body_and_headers(
    provider: OpenAIProvider, openai_server: OpenAIServer
) -> None:
    request = _request("hi", temperature=0.0, max_tokens=12, params={"seed": 7, "top_p": 0.5})
    await provider.generate(request)
    (seen,) = openai_server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.body == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "max_tokens": 12,
        "seed": 7,
        "top_p": 0.5,
    }
    assert seen.headers["Authorization"] == f"Bearer {KEY}"


async def test_no_key_sends_no_authorization(openai_server: OpenAIServer) -> None:
    provider = OpenAIProvider(openai_server.base_url)
    try:
        await provider.generate(_request())
    finally:
        await provider.aclose()
    assert "Authorization" not in openai_server.requests[0].headers


SCHEMA = {
    "title": "Verdict score",
    "type": "object",
    "properties": {"score": {"type": "integer"}},
    "required": ["score"],
    "additionalProperties": False,
}


async def test_json_schema_is_sent_as_strict_response_format(
    provider: OpenAIProvider, openai_server: OpenAIServer
) -> None:
    await provider.generate(_request(response_schema=SCHEMA))
    sent = openai_server.requests[0].body["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "Verdict_score", "schema": SCHEMA, "strict": True},
    }


async def test_json_schema_omitted_when_unsupported(openai_server: OpenAIServer) -> None:
    provider = OpenAIProvider(openai_server.base_url, supports_json_schema=False)
    try:
        await provider.generate(_request(response_schema=SCHEMA))
    finally:
        await provider.aclose()
    assert "response_format" not in openai_server.requests[0].body


async def test_delay_is_reflected_in_latency(
    provider: OpenAIProvider, openai_server: OpenAIServer
) -> None:
    openai_server.enqueue(Reply("slow", delay=0.2))
    response = await provider.generate(_request())
    assert response.text == "slow"
    assert 0.2 <= response.latency_s < 2.0


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        pytest.param(400, ProviderHTTPError, id="400"),
        pytest.param(404, ProviderHTTPError, id="404"),
        pytest.param(422, ProviderHTTPError, id="422"),
        pytest.param(401, ProviderAuthError, id="401"),
        pytest.param(403, ProviderAuthError, id="403"),
        pytest.param(408, ProviderTimeoutError, id="408"),
        pytest.param(429, RateLimitError, id="429"),
        pytest.param(500, ProviderServerError, id="500"),
        pytest.param(503, ProviderServerError, id="503"),
    ],
)
async def test_status_codes_map_to_the_error_tree(
    provider: OpenAIProvider,
    openai_server: OpenAIServer,
    status: int,
    error_type: type[ProviderError],
) -> None:
    body = {"error": {"message": f"explained {status}", "type": "x"}}
    openai_server.enqueue(Status(status, json_body=body))
    with pytest.raises(error_type) as info:
        await provider.generate(_request())
    assert info.value.status == status
    assert f"explained {status}" in str(info.value)
    assert info.value.retryable == (status in (408, 429) or status >= 500)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"Retry-After": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after-ms": "1500"}, 1.5, id="milliseconds"),
        pytest.param({}, None, id="absent"),
    ],
)
async def test_rate_limit_carries_retry_after(
    provider: OpenAIProvider,
    openai_server: OpenAIServer,
    headers: dict[str, str],
    expected: float | None,
) -> None:
    openai_server.enqueue(Status(429, headers=headers))
    with pytest.raises(RateLimitError) as info:
        await provider.generate(_request())
    assert info.value.retry_after == expected


async def test_hang_times_out_within_the_timeout(openai_server: OpenAIServer) -> None:
    provider = OpenAIProvider(openai_server.base_url, KEY, timeout=0.3)
    openai_server.enqueue(Hang())
    started = time.perf_counter()
    try:
        with pytest.raises(ProviderTimeoutError) as info:
            await provider.generate(_request())
    finally:
        await provider.aclose()
    assert 0.3 <= time.perf_counter() - started < 10.0
    assert info.value.retryable


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"<html>Bad gateway</html>", id="html"),
        pytest.param(b"", id="empty"),
        pytest.param(b'{"choices": [{"message": {"content": "tru', id="truncated"),
        pytest.param(b'{"id": "x", "object": "chat.completion"}', id="no-choices"),
        pytest.param(b'{"choices": []}', id="empty-choices"),
        pytest.param(b'{"choices": [{"message": {"role": "assistant"}}]}', id="no-content"),
        pytest.param(b'{"choices": [{"message": {"content": null}}]}', id="null-content"),
        pytest.param(b'{"choices": [{"message": {"content": 42}}]}', id="number-content"),
        pytest.param(b'["not", "an", "object"]', id="json-list"),
        pytest.param(b'{"error": {"message": "quota gone"}}', id="error-with-200"),
    ],
)
async def test_malformed_bodies_raise_response_error(
    provider: OpenAIProvider, openai_server: OpenAIServer, raw: bytes
) -> None:
    openai_server.enqueue(Malformed(raw))
    with pytest.raises(ProviderResponseError) as info:
        await provider.generate(_request())
    assert not info.value.retryable
    assert str(info.value).startswith("openai: ")


async def test_refusal_is_named_in_the_error(
    provider: OpenAIProvider, openai_server: OpenAIServer
) -> None:
    body = {"choices": [{"message": {"content": None, "refusal": "I can't help with that"}}]}
    openai_server.enqueue(Malformed(json.dumps(body).encode()))
    with pytest.raises(ProviderResponseError, match="refused: I can't help with that"):
        await provider.generate(_request())


async def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens here
    provider = OpenAIProvider(f"http://127.0.0.1:{port}/v1", KEY, timeout=5.0)
    try:
        with pytest.raises(ProviderConnectionError) as info:
            await provider.generate(_request())
    finally:
        await provider.aclose()
    assert info.value.retryable
    assert KEY not in str(info.value)


async def test_key_never_shown(openai_server: OpenAIServer) -> None:
    provider = OpenAIProvider(openai_server.base_url, KEY)
    # A server that echoes the key back must not get it into our error message.
    openai_server.enqueue(Status(401, json_body={"error": {"message": f"bad key {KEY}"}}))
    try:
        with pytest.raises(ProviderAuthError) as info:
            await provider.generate(_request())
    finally:
        await provider.aclose()
    assert KEY not in repr(provider)
    assert KEY not in str(provider)
    assert KEY not in "".join(traceback.format_exception(info.value))
    assert "bad key ***" in str(info.value)


def test_sessions_follow_the_event_loop(openai_server: OpenAIServer) -> None:
    provider = OpenAIProvider(openai_server.base_url)

    async def once(close: bool) -> str:
        text = (await provider.generate(_request("loop"))).text
        if close:
            await provider.aclose()
        return text

    # Like sync run(): a fresh loop per call, with and without a clean aclose() in between.
    assert asyncio.run(once(close=False)) == "echo: loop"
    assert asyncio.run(once(close=True)) == "echo: loop"
    assert asyncio.run(once(close=True)) == "echo: loop"
    assert len(openai_server.requests) == 3


async def test_the_official_sdk_accepts_the_test_server(openai_server: OpenAIServer) -> None:
    """Guards the fake: the real openai client must parse what the server sends."""
    openai = pytest.importorskip("openai")
    client = openai.AsyncOpenAI(base_url=openai_server.base_url, api_key=KEY, max_retries=0)
    try:
        completion = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "sdk check"}]
        )
        assert completion.choices[0].message.content == "echo: sdk check"
        assert completion.usage is not None and completion.usage.prompt_tokens == 2
        openai_server.enqueue(Status(429, headers={"Retry-After": "1"}))
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(
                model="test-model", messages=[{"role": "user", "content": "x"}]
            )
    finally:
        await client.close()
