"""Provider headers are checked when the provider is built (names, values, a second
credential), and a request's own bad header is a ProviderRequestError that is never sent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer
from tests.support.provider_calls import request_error

from aieval.errors import ConfigError, ProviderRequestError
from aieval.providers import (
    AnthropicProvider,
    ChatRequest,
    OpenAIProvider,
    ResilientProvider,
    RetryPolicy,
    build_provider,
)
from aieval.runner import parse_eval, run_eval

SECRET = "hdr-secret-3c5e7a9b1d2f4a6c"
KEY = "sk-hdr-key-8b7a6c5d4e3f2a1b"

BAD_HEADERS = [
    pytest.param({"X Team": SECRET}, r"headers\.'X Team': not a valid HTTP header name",
                 id="space"),
    pytest.param({f"Authorization: Bearer {SECRET}": "x"},
                 r"headers\.'Authorization': not a valid .*':' is not shown", id="whole-line"),
    pytest.param({"X-Tok": f"a\r\nX-Injected: {SECRET}"}, r"headers\.X-Tok: .*line break",
                 id="crlf"),
    pytest.param({"X-Tok": f"{SECRET}\n"}, r"headers\.X-Tok: .*line break", id="lf"),
    pytest.param({"X-Tok": f"{SECRET}\x00"}, r"headers\.X-Tok: .*U\+0000", id="nul"),
    pytest.param({"X-Tok": f"{SECRET}\x7f"}, r"headers\.X-Tok: .*U\+007F", id="del"),
    pytest.param({"X-Tok": f" {SECRET}"}, r"headers\.X-Tok: .*whitespace", id="leading-space"),
    # (an eval file's schema says the same its own way: "Input should be a valid string")
    pytest.param({"X-Tok": 12345},
                 r"headers\.X-Tok: (a header value must be a string, got int|.*valid string)",
                 id="not-text"),
    pytest.param({"X-Tok": SECRET, "x-tok": "b"}, r"headers\.x-tok: given twice .*'X-Tok'",
                 id="twice"),
]  # fmt: skip


def _request(**kwargs: Any) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], **kwargs)


def _refused(build: Callable[[], object], message: str) -> str:
    with pytest.raises(ConfigError, match=message) as caught:
        build()
    text = str(caught.value)
    assert SECRET not in text and KEY not in text
    return text


@pytest.mark.parametrize(("headers", "message"), BAD_HEADERS)
def test_openai_provider_checks_headers_when_built(
    openai_server: OpenAIServer, headers: dict[str, Any], message: str
) -> None:
    _refused(lambda: OpenAIProvider(openai_server.base_url, headers=headers), message)
    _refused(lambda: build_provider("vllm", base_url=openai_server.base_url, headers=headers,
                                    cache=False), message)  # fmt: skip


@pytest.mark.parametrize(("headers", "message"), BAD_HEADERS)
def test_anthropic_provider_checks_headers_when_built(
    openai_server: OpenAIServer, headers: dict[str, Any], message: str
) -> None:
    pytest.importorskip("anthropic")
    _refused(lambda: AnthropicProvider(KEY, base_url=openai_server.root_url, headers=headers),
             message)  # fmt: skip


@pytest.mark.parametrize(("headers", "message"), BAD_HEADERS)
def test_eval_file_target_headers_are_checked(
    openai_server: OpenAIServer, headers: dict[str, Any], message: str
) -> None:
    target = {"provider": "openai-compatible", "base_url": openai_server.base_url, "model": "m",
              "headers": headers}  # fmt: skip
    body = {"name": "h", "dataset": {"rows": [{"prompt": "q"}]}, "scorers": ["exact_match"],
            "target": target}  # fmt: skip
    _refused(lambda: parse_eval(body), message)
    assert openai_server.requests == []


def test_non_ascii_values_go_out_as_utf8_from_the_openai_provider(
    openai_server: OpenAIServer,
) -> None:
    async def call() -> None:
        provider = OpenAIProvider(openai_server.base_url, headers={"X-Team": "équipe"})
        try:
            await provider.generate(_request())
        finally:
            await provider.aclose()

    asyncio.run(call())
    (seen,) = openai_server.requests
    assert seen.headers["X-Team"] == "équipe"  # the loopback server reads headers as UTF-8


def test_anthropic_refuses_non_ascii_values_its_sdk_cannot_send(
    openai_server: OpenAIServer,
) -> None:
    pytest.importorskip("anthropic")
    _refused(
        lambda: AnthropicProvider(KEY, base_url=openai_server.root_url,
                                  headers={"X-Team": f"équipe-{SECRET}"}),
        r"headers\.X-Team: .*non-ASCII",
    )  # fmt: skip


def test_anthropic_request_header_with_a_line_break_is_not_a_connection_error(
    openai_server: OpenAIServer,
) -> None:
    """Before, httpx refused it inside the SDK, which reported a retryable connection error."""
    pytest.importorskip("anthropic")

    def build() -> ResilientProvider:
        inner = AnthropicProvider(KEY, base_url=openai_server.root_url, timeout=5.0)
        return ResilientProvider(inner, retry=RetryPolicy(max_retries=3, initial_delay=0.01))

    request = _request(headers={"X-Tok": f"a\nb{SECRET}"})
    error = request_error(build, request, ProviderRequestError)
    assert not error.retryable
    assert "the request's headers.X-Tok" in str(error) and "line break" in str(error)
    assert SECRET not in str(error)
    assert openai_server.requests == []


def test_openai_request_header_problems_are_named(openai_server: OpenAIServer) -> None:
    request = _request(headers={"X-Tok": f" {SECRET}"})
    error = request_error(
        lambda: OpenAIProvider(openai_server.base_url), request, ProviderRequestError
    )
    assert "the request's headers.X-Tok" in str(error) and "whitespace" in str(error)
    assert SECRET not in str(error) and openai_server.requests == []


# --- a key and a credential header together ---------------------------------------------


@pytest.mark.parametrize("header", ["Authorization", "authorization", "x-api-key", "X-Api-Key"])
def test_anthropic_refuses_a_key_with_a_credential_header(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, header: str
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    headers = {header: f"Bearer {SECRET}"}
    text = _refused(
        lambda: AnthropicProvider(KEY, base_url=openai_server.root_url, headers=headers),
        rf"api_key=.*headers\.{header}",
    )
    assert "drop" in text
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    _refused(
        lambda: AnthropicProvider(base_url=openai_server.root_url, headers=headers),
        rf"ANTHROPIC_API_KEY.*headers\.{header}",
    )


@pytest.mark.parametrize(
    ("header", "value"),
    [("Authorization", f"Bearer {SECRET}"), ("x-api-key", SECRET)],
)
def test_anthropic_with_only_a_credential_header_sends_that_header_alone(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, header: str, value: str
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)

    async def call() -> str:
        provider = AnthropicProvider(base_url=openai_server.root_url, headers={header: value})
        try:
            return (await provider.generate(_request())).text
        finally:
            await provider.aclose()

    assert asyncio.run(call()) == "echo: hi"
    (seen,) = openai_server.requests
    assert seen.headers.getall(header) == [value]
    other = "x-api-key" if header == "Authorization" else "Authorization"
    assert other not in seen.headers


def test_anthropic_refuses_a_credential_header_with_the_auth_token_variable(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", KEY)
    _refused(
        lambda: AnthropicProvider(base_url=openai_server.root_url,
                                  headers={"x-api-key": SECRET}),
        r"ANTHROPIC_AUTH_TOKEN.*headers\.x-api-key",
    )  # fmt: skip


def test_anthropic_without_any_credential_still_needs_a_key(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    from aieval.errors import ProviderAuthError

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider(base_url=openai_server.root_url, headers={"X-Team": "evals"})


@pytest.mark.parametrize("header", ["Authorization", "authorization"])
def test_openai_refuses_a_key_with_an_authorization_header(
    openai_server: OpenAIServer, header: str
) -> None:
    headers = {header: f"Bearer {SECRET}"}
    _refused(lambda: OpenAIProvider(openai_server.base_url, api_key=KEY, headers=headers),
             rf"api_key=.*headers\.{header}")  # fmt: skip


def test_build_provider_names_the_key_variable_beside_the_header(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", KEY)
    _refused(
        lambda: build_provider("vllm", base_url=openai_server.base_url, cache=False,
                               headers={"Authorization": f"Bearer {SECRET}"}),
        r"VLLM_API_KEY.*headers\.Authorization",
    )  # fmt: skip


def test_openai_with_only_an_authorization_header_sends_it_once(
    openai_server: OpenAIServer,
) -> None:
    async def call() -> None:
        headers = {"authorization": f"Bearer {SECRET}"}
        provider = OpenAIProvider(openai_server.base_url, headers=headers)
        try:
            await provider.generate(_request())
        finally:
            await provider.aclose()

    asyncio.run(call())
    (seen,) = openai_server.requests
    assert seen.headers.getall("Authorization") == [f"Bearer {SECRET}"]


def test_openai_keeps_a_gateway_header_beside_the_key(openai_server: OpenAIServer) -> None:
    """Only Authorization carries the OpenAI key: a gateway's own x-api-key is not a clash."""

    async def call() -> None:
        provider = OpenAIProvider(openai_server.base_url, api_key=KEY,
                                  headers={"x-api-key": SECRET})  # fmt: skip
        try:
            await provider.generate(_request())
        finally:
            await provider.aclose()

    asyncio.run(call())
    (seen,) = openai_server.requests
    assert seen.headers["Authorization"] == f"Bearer {KEY}" and seen.headers["x-api-key"] == SECRET


def test_an_eval_file_with_good_headers_sends_them_unchanged(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """Eval-file headers that pass the check reach the server unchanged."""
    target = {"provider": "openai-compatible", "base_url": openai_server.base_url, "model": "m",
              "headers": {"X-Tok": SECRET}}  # fmt: skip
    body = {"name": "h", "dataset": {"rows": [{"prompt": "q", "expected": "echo: q"}]},
            "scorers": ["exact_match"], "target": target}  # fmt: skip
    (result,) = run_eval(parse_eval(body), store=tmp_path / "runs.db")
    assert result.metrics["exact_match"] == 1.0
    assert [r.headers["X-Tok"] for r in openai_server.requests] == [SECRET]
