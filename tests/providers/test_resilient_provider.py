"""Retries, Retry-After and 429 back-off against the real loopback server."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.openai_server import (
    Behaviour,
    Hang,
    Malformed,
    OpenAIServer,
    Reply,
    Status,
)

from aieval.errors import (
    ProviderAuthError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
)
from aieval.providers import (
    ChatRequest,
    OpenAIProvider,
    ResilientProvider,
    RetryPolicy,
    build_provider,
)

KEY = "sk-resilient-secret-42"
FAST = RetryPolicy(max_retries=3, initial_delay=0.01, max_delay=0.05)


def _request(text: str = "hi") -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": text}])


@pytest.fixture
async def resilient(openai_server: OpenAIServer) -> AsyncIterator[ResilientProvider]:
    provider = ResilientProvider(OpenAIProvider(openai_server.base_url, KEY, timeout=5.0), FAST)
    yield provider
    await provider.aclose()


async def test_retry_after_is_honoured_then_success(
    resilient: ResilientProvider, openai_server: OpenAIServer
) -> None:
    openai_server.enqueue(Status(429, headers={"Retry-After": "0.3"}))
    response = await resilient.generate(_request("after the wait"))
    first, second = openai_server.requests
    assert second.received_at - first.received_at >= 0.3
    assert response.text == "echo: after the wait"
    assert response.retries == 1


async def test_retry_after_is_capped(openai_server: OpenAIServer) -> None:
    policy = RetryPolicy(max_retries=1, max_retry_after=0.1)
    inner = OpenAIProvider(openai_server.base_url)
    provider = ResilientProvider(inner, policy)
    openai_server.enqueue(Status(429, headers={"Retry-After": "3600"}))
    started = time.monotonic()
    try:
        response = await provider.generate(_request())
    finally:
        await provider.aclose()
    assert response.retries == 1
    # capped at 0.1 s, not the 3600 s asked for; the bound leaves room for a loaded machine
    assert time.monotonic() - started < 30.0


async def test_server_errors_are_retried_then_succeed(
    resilient: ResilientProvider, openai_server: OpenAIServer
) -> None:
    openai_server.enqueue(Status(500), Status(502))
    response = await resilient.generate(_request())
    assert response.retries == 2
    assert len(openai_server.requests) == 3


async def test_server_error_forever_gives_up_after_max_retries(
    resilient: ResilientProvider, openai_server: OpenAIServer
) -> None:
    openai_server.responder = lambda body: Status(500)
    with pytest.raises(ProviderServerError) as info:
        await resilient.generate(_request())
    assert info.value.retries == FAST.max_retries
    assert len(openai_server.requests) == FAST.max_retries + 1


@pytest.mark.parametrize(
    ("behaviour", "error_type"),
    [
        pytest.param(Status(400), ProviderHTTPError, id="400"),
        pytest.param(Status(404), ProviderHTTPError, id="404"),
        pytest.param(Status(401), ProviderAuthError, id="401"),
        pytest.param(Malformed(b"not json"), ProviderResponseError, id="malformed"),
    ],
)
async def test_final_errors_are_not_retried(
    resilient: ResilientProvider,
    openai_server: OpenAIServer,
    behaviour: Behaviour,
    error_type: type[Exception],
) -> None:
    openai_server.enqueue(behaviour)
    with pytest.raises(error_type) as info:
        await resilient.generate(_request())
    assert len(openai_server.requests) == 1
    assert getattr(info.value, "retries", None) == 0


async def test_hang_is_retried_then_times_out(openai_server: OpenAIServer) -> None:
    inner = OpenAIProvider(openai_server.base_url, timeout=0.2)
    provider = ResilientProvider(inner, RetryPolicy(max_retries=1, initial_delay=0.01))
    openai_server.responder = lambda body: Hang()
    started = time.monotonic()
    try:
        with pytest.raises(ProviderTimeoutError) as info:
            await provider.generate(_request())
    finally:
        await provider.aclose()
    assert 0.4 <= time.monotonic() - started < 10.0  # two 0.2 s timeouts, never a hang
    assert info.value.retries == 1
    assert len(openai_server.requests) == 2


async def test_retry_logs_never_contain_the_key(
    resilient: ResilientProvider,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    openai_server.enqueue(Status(503, json_body={"error": {"message": f"echo {KEY}"}}))
    with caplog.at_level(logging.DEBUG, logger="aieval.providers"):
        await resilient.generate(_request())
    assert "retry 1/3" in caplog.text
    assert KEY not in caplog.text


async def test_burst_of_429s_lowers_server_side_concurrency(openai_server: OpenAIServer) -> None:
    capacity, retry_after = 4, 0.1
    rejected_at: list[float] = []

    def over_capacity(body: object) -> Behaviour:
        if openai_server.in_flight > capacity:
            rejected_at.append(time.monotonic())
            return Status(429, headers={"Retry-After": str(retry_after)}, delay=0.01)
        return Reply("ok", delay=0.03)

    openai_server.responder = over_capacity
    policy = RetryPolicy(max_retries=100, initial_delay=0.01, max_delay=0.05)
    provider = ResilientProvider(OpenAIProvider(openai_server.base_url), policy, 16)
    try:
        responses = await asyncio.gather(*(provider.generate(_request()) for _ in range(80)))
    finally:
        await provider.aclose()
    assert all(r.text == "ok" for r in responses)
    assert openai_server.max_in_flight > 8  # the first burst went well over capacity
    settled = rejected_at[0] + retry_after
    later = [r.in_flight for r in openai_server.requests if r.received_at > settled]
    assert later and max(later) <= 8  # halved, and never grew back to hammering
    # Backing off keeps rejections a small share of the traffic after the first burst.
    late_rejections = sum(t > settled for t in rejected_at)
    assert late_rejections < 0.25 * len(later)


async def test_concurrency_is_used_fully_without_429s(openai_server: OpenAIServer) -> None:
    # Speed itself is measured by bench/runner.py; here only the behaviour: with no 429s the
    # limiter lets exactly `concurrency` requests be in flight, never fewer and never more.
    # The server holds its answers until that many arrived: a reply delay alone let the first
    # requests finish before a slowed client had sent the last of the first wave.
    requests, concurrency, delay = 200, 50, 0.05
    openai_server.hold_until_in_flight(concurrency)
    openai_server.responder = lambda body: Reply("fast", delay=delay)
    provider = ResilientProvider(OpenAIProvider(openai_server.base_url), FAST, concurrency)
    try:
        await asyncio.gather(*(provider.generate(_request()) for _ in range(requests)))
    finally:
        await provider.aclose()
    assert openai_server.max_in_flight == concurrency


def test_stack_survives_successive_event_loops(openai_server: OpenAIServer, tmp_path: Path) -> None:
    provider = build_provider(
        "openai-compatible", base_url=openai_server.base_url, cache_path=tmp_path / "c.db"
    )
    openai_server.enqueue(Status(503))

    async def once(text: str) -> tuple[str, int, bool]:
        try:
            response = await provider.generate(_request(text))
        finally:
            await provider.aclose()
        return response.text, response.retries, response.cached

    # Like a sync run() per call: each asyncio.run() is a new event loop.
    assert asyncio.run(once("a")) == ("echo: a", 1, False)
    assert asyncio.run(once("b")) == ("echo: b", 0, False)
