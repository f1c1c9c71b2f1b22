"""Custom HTTP headers go out as headers: never in the JSON body, never in the store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply, Status

from aieval import run
from aieval.errors import ConfigError, ProviderHTTPError, ProviderRequestError
from aieval.providers import (
    AnthropicProvider,
    ChatRequest,
    ChatResponse,
    OpenAIProvider,
    build_provider,
)
from aieval.runner import parse_eval, run_eval
from aieval.scorers import exact_match

TOKEN = "hdr-gw-5a7c9e1b3d5f7a9c"
ROWS = [{"id": f"r{i}", "prompt": f"q{i}", "expected": f"echo: q{i}"} for i in range(3)]


def _stored_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.glob("runs.db*"))


def _go(server: OpenAIServer, tmp_path: Path, **kwargs: Any) -> Any:
    options: dict[str, Any] = dict(
        name="hdr",
        dataset=ROWS,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=server.base_url,
        model="m",
        store=tmp_path / "runs.db",
    )
    options.update(kwargs)
    return run(**options)


def test_params_headers_are_sent_as_http_headers_not_in_the_body(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    result = _go(
        openai_server,
        tmp_path,
        params={"temperature": 0, "top_p": 0.5, "headers": {"X-Gateway-Token": TOKEN}},
    )
    assert result.metrics["exact_match"] == 1.0
    assert len(openai_server.requests) == 3
    for request in openai_server.requests:
        assert request.headers["X-Gateway-Token"] == TOKEN
        assert "headers" not in request.body and request.body["top_p"] == 0.5
        assert TOKEN not in json.dumps(request.body)
    stored = _stored_bytes(tmp_path)
    assert stored and TOKEN.encode() not in stored
    with sqlite3.connect(tmp_path / "runs.db") as db:
        (config,) = db.execute("SELECT config FROM runs").fetchone()
    assert json.loads(config)["target"]["params"]["headers"] == "[redacted]"


def test_eval_file_target_headers_are_http_headers(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    config = parse_eval(
        {
            "name": "hdr",
            "dataset": {"rows": ROWS},
            "target": {
                "provider": "openai-compatible",
                "model": "m",
                "base_url": openai_server.base_url,
                "params": {"temperature": 0},
                "headers": {"X-Gateway-Token": TOKEN, "X-Team": "evals"},
            },
            "scorers": ["exact_match"],
        }
    )
    (result,) = run_eval(config, store=tmp_path / "runs.db")
    assert result.metrics["exact_match"] == 1.0
    seen = openai_server.requests[0]
    assert seen.headers["X-Gateway-Token"] == TOKEN and seen.headers["X-Team"] == "evals"
    assert "headers" not in seen.body
    assert TOKEN.encode() not in _stored_bytes(tmp_path)


def test_an_echoed_header_value_is_redacted_from_the_stored_error(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Status(400, {"error": {"message": f"bad {TOKEN}"}})
    result = _go(openai_server, tmp_path, params={"headers": {"X-Gateway-Token": TOKEN}}, limit=1)
    error = result.samples[0].errors["target"]
    assert "HTTP 400" in error and TOKEN not in error
    assert TOKEN.encode() not in _stored_bytes(tmp_path)


def test_headers_in_both_places_of_an_eval_file_are_refused() -> None:
    target = {"provider": "openai", "model": "m", "headers": {"X-A": "1"},
              "params": {"headers": {"X-B": "2"}}}  # fmt: skip
    with pytest.raises(ConfigError, match=r"target.*headers once.*target\.headers"):
        parse_eval({"name": "n", "dataset": "d.jsonl", "scorers": ["exact_match"],
                    "target": target})  # fmt: skip


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        pytest.param({"X-Count": 3}, r"params\.headers\.X-Count: a header value must be a string",
                     id="not-a-string"),
        pytest.param({"X-A": "a\r\nInjected: 1"}, r"params\.headers\.X-A: .*line break",
                     id="line-break"),
        pytest.param({"X A": "b"}, r"params\.headers\.'X A': not a valid HTTP header name",
                     id="bad-name"),
        pytest.param("X-A: 1", r"params\.headers: HTTP headers must be a mapping", id="string"),
    ],
)  # fmt: skip
def test_bad_params_headers_are_refused_before_any_call(
    openai_server: OpenAIServer, tmp_path: Path, headers: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        _go(openai_server, tmp_path, params={"headers": headers})
    assert openai_server.requests == []


class _NoHeaders:
    """A user's provider that knows nothing of request headers."""

    name = "plain"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="x", model=request.model)

    async def aclose(self) -> None:
        return None


def test_a_provider_that_cannot_send_headers_refuses_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"params\.headers: provider 'plain' cannot send"):
        run(name="h", dataset=ROWS, scorers=[exact_match], provider=_NoHeaders(), model="m",
            params={"headers": {"X-A": "value"}}, store=False)  # fmt: skip


async def test_build_provider_headers_reach_the_server(openai_server: OpenAIServer) -> None:
    provider = build_provider(
        "openai-compatible", base_url=openai_server.base_url, headers={"X-Team": "evals"},
        cache=False,
    )  # fmt: skip
    try:
        await provider.generate(ChatRequest(model="m", messages=[{"role": "user", "content": "q"}]))
    finally:
        await provider.aclose()
    assert openai_server.requests[0].headers["X-Team"] == "evals"
    assert "headers" not in openai_server.requests[0].body


def test_build_provider_refuses_headers_for_an_instance_or_a_provider_without_them() -> None:
    instance = OpenAIProvider("http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="headers= apply to a provider name"):
        build_provider(instance, headers={"X-A": "1"})
    from aieval.providers import register_provider

    def plain(*, base_url: str | None = None) -> _NoHeaders:
        return _NoHeaders()

    register_provider("no-headers-here", plain)
    with pytest.raises(ConfigError, match="provider 'no-headers-here' takes no headers"):
        build_provider("no-headers-here", headers={"X-A": "1"}, cache=False)


def test_different_header_values_never_share_a_cache_entry(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply("fixed")
    _go(openai_server, tmp_path, params={"temperature": 0, "headers": {"X-Route": "blue-v1"}})
    _go(openai_server, tmp_path, params={"temperature": 0, "headers": {"X-Route": "green-v2"}})
    assert len(openai_server.requests) == 6  # the second run was not served from the first's
    again = _go(openai_server, tmp_path, params={"temperature": 0,
                                                 "headers": {"X-Route": "green-v2"}})  # fmt: skip
    assert len(openai_server.requests) == 6 and all(s.cached for s in again.samples)


async def test_anthropic_sends_configured_and_request_headers(
    openai_server: OpenAIServer,
) -> None:
    pytest.importorskip("anthropic")
    provider = AnthropicProvider(
        "sk-ant-test-1234567", base_url=openai_server.root_url, headers={"X-Team": "evals"}
    )
    openai_server.enqueue(Status(400, {"error": {"message": f"echo {TOKEN}"}}))
    request = ChatRequest(
        model="c", messages=[{"role": "user", "content": "q"}], headers={"X-Gateway-Token": TOKEN}
    )
    try:
        with pytest.raises(ProviderHTTPError) as caught:
            await provider.generate(request)
    finally:
        await provider.aclose()
    seen = openai_server.requests[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["X-Team"] == "evals" and seen.headers["X-Gateway-Token"] == TOKEN
    assert TOKEN not in json.dumps(seen.body) and TOKEN not in str(caught.value)


KEY = "sk-live-reqhdr-0a1b2c3d4e5f"


@pytest.mark.parametrize(
    ("provider", "header"),
    [
        pytest.param("openai", "Authorization", id="openai-authorization"),
        pytest.param("anthropic", "x-api-key", id="anthropic-x-api-key"),
        pytest.param("anthropic", "authorization", id="anthropic-authorization"),
    ],
)
def test_a_request_credential_header_beside_the_providers_key_is_refused_before_any_call(
    openai_server: OpenAIServer, tmp_path: Path, provider: str, header: str
) -> None:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
        instance: Any = AnthropicProvider(KEY, base_url=openai_server.root_url)
    else:
        instance = OpenAIProvider(openai_server.base_url, api_key=KEY)
    with pytest.raises(ConfigError) as caught:
        _go(
            openai_server,
            tmp_path,
            provider=instance,
            base_url=None,
            params={"headers": {header: f"Bearer {TOKEN}"}},
        )
    message = str(caught.value)
    assert message.startswith(f"params.headers.{header}: ") and "api_key=" in message
    assert TOKEN not in message and KEY not in message
    assert openai_server.requests == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_request_credential_header_sent_straight_to_a_keyed_provider_is_not_sent(
    openai_server: OpenAIServer, provider: str
) -> None:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
        instance: Any = AnthropicProvider(KEY, base_url=openai_server.root_url)
    else:
        instance = OpenAIProvider(openai_server.base_url, api_key=KEY)
    request = ChatRequest(
        model="m",
        messages=[{"role": "user", "content": "q"}],
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    try:
        with pytest.raises(ProviderRequestError, match=r"not sent") as caught:
            await instance.generate(request)
    finally:
        await instance.aclose()
    assert TOKEN not in str(caught.value) and KEY not in str(caught.value)
    assert openai_server.requests == []


def test_a_request_authorization_header_alone_is_the_credential(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    result = _go(openai_server, tmp_path, params={"headers": {"Authorization": f"Bearer {TOKEN}"}})
    assert result.metrics["exact_match"] == 1.0
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in openai_server.requests)


def test_cache_false_with_a_provider_that_carries_a_cache_is_refused(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    provider = build_provider(
        "openai-compatible", base_url=openai_server.base_url, cache=tmp_path / "cache.db"
    )
    with pytest.raises(ConfigError, match=r"^cache=False, but the provider"):
        _go(openai_server, tmp_path, provider=provider, base_url=None, cache=False)
    assert openai_server.requests == []
