"""A credential given twice (a ``user:password@`` base URL plus an API key or an Authorization
header) is refused when the provider is built, and no HTTP client error ever crashes a run:
each becomes a ProviderError recorded on the sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply, Status
from tests.support.provider_calls import request_error

from aieval import run
from aieval.errors import ConfigError, ProviderError, ProviderRequestError
from aieval.providers import AnthropicProvider, ChatRequest, OpenAIProvider, build_provider
from aieval.runner import parse_eval, run_eval

KEY = "sk-live-twice-5e6f7a8b9c0d1e2f"
PASSWORD = "pw-twice-0f1e2d3c4b5a"
ROWS = [{"id": f"r{i}", "prompt": f"q{i}", "expected": f"echo: q{i}"} for i in range(3)]


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://gwuser:{PASSWORD}@")


def _request(**kwargs: Any) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], **kwargs)


def _assert_no_secret(message: str) -> None:
    assert KEY not in message and PASSWORD not in message and "gwuser" not in message


@pytest.mark.parametrize(
    ("kwargs", "other"),
    [
        pytest.param({"api_key": KEY}, "an API key (api_key=", id="api-key"),
        pytest.param(
            {"headers": {"authorization": f"Bearer {KEY}"}},
            "an Authorization header (headers=)",
            id="authorization-header",
        ),
    ],
)
def test_the_openai_provider_refuses_url_credentials_and_a_second_one(
    openai_server: OpenAIServer, kwargs: dict[str, Any], other: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIProvider(_with_credentials(openai_server.base_url), **kwargs)
    message = str(caught.value)
    assert "base_url" in message and "user:password@" in message and other in message
    assert "[redacted]@127.0.0.1" in message  # the URL is named, without its credentials
    _assert_no_secret(message)


def test_build_provider_names_the_environment_variable(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", _with_credentials(openai_server.base_url))
    with pytest.raises(ConfigError) as caught:
        build_provider("openai", cache=False)
    message = str(caught.value)
    assert "OPENAI_BASE_URL" in message and "OPENAI_API_KEY" in message
    _assert_no_secret(message)
    with pytest.raises(ConfigError, match=r"base_url .*api_key="):
        build_provider("openai", base_url=_with_credentials(openai_server.base_url), api_key=KEY)


def test_url_credentials_alone_still_authenticate(openai_server: OpenAIServer) -> None:
    import asyncio

    async def call() -> str:
        provider = OpenAIProvider(_with_credentials(openai_server.base_url))
        try:
            return (await provider.generate(_request())).text
        finally:
            await provider.aclose()

    assert asyncio.run(call()) == "echo: hi"
    assert openai_server.requests[0].headers["Authorization"].startswith("Basic ")


def test_anthropic_refuses_url_credentials_with_an_authorization_header(
    openai_server: OpenAIServer,
) -> None:
    pytest.importorskip("anthropic")
    url = _with_credentials(openai_server.root_url)
    with pytest.raises(ConfigError) as caught:
        AnthropicProvider(KEY, base_url=url, headers={"Authorization": f"Bearer {KEY}"})
    _assert_no_secret(str(caught.value))


def test_anthropic_refuses_url_credentials_when_the_key_needs_the_same_header(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK installed here sends the key as ``Authorization: Bearer``; the HTTP client would
    replace it with the URL's Basic credentials, so the key would silently not be sent."""
    pytest.importorskip("anthropic")
    from aieval.providers._anthropic import _import_sdk, _key_in_authorization

    if not _key_in_authorization(_import_sdk()):
        pytest.skip("this anthropic SDK sends the key as X-Api-Key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(ConfigError) as caught:
        AnthropicProvider(base_url=_with_credentials(openai_server.root_url))
    message = str(caught.value)
    assert "base_url" in message and "ANTHROPIC_API_KEY" in message
    _assert_no_secret(message)


def _eval(server: OpenAIServer, target: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "twice",
        "dataset": {"rows": ROWS},
        "target": {"provider": "openai-compatible", "model": "m", **target},
        "scorers": ["exact_match"],
        "settings": {"retries": 2},
    }


def test_an_eval_file_with_both_is_refused_before_any_sample(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """The target's Authorization header and the URL's credentials meet when the run builds
    its target: refused before the first sample, naming both, showing neither."""
    config = parse_eval(
        _eval(
            openai_server,
            {
                "base_url": _with_credentials(openai_server.base_url),
                "headers": {"Authorization": f"Bearer {KEY}"},
            },
        )
    )
    with pytest.raises(ConfigError) as caught:
        run_eval(config, store=tmp_path / "runs.db")
    message = str(caught.value)
    assert "headers.Authorization" in message and "user:password@" in message
    _assert_no_secret(message)
    assert openai_server.requests == []


def test_a_request_header_the_http_client_would_refuse_is_a_provider_error(
    openai_server: OpenAIServer,
) -> None:
    """A request's own header that aiohttp would refuse (or send wrongly) is a
    ProviderRequestError naming it, never an exception that escapes the run, never sent."""

    def build() -> OpenAIProvider:
        return OpenAIProvider(openai_server.base_url, api_key=KEY)

    def call(headers: dict[str, Any]) -> ProviderError:
        return request_error(build, _request(headers=headers), ProviderError)

    injected = call({"X-Note": f"a\r\nX-Key: {KEY}"})
    assert isinstance(injected, ProviderRequestError) and not injected.retryable
    assert "the request's headers.X-Note" in str(injected) and "line break" in str(injected)
    assert KEY not in str(injected)
    not_text = call({"X-Count": 5})
    assert isinstance(not_text, ProviderRequestError)
    assert "headers.X-Count: a header value must be a string" in str(not_text)
    assert openai_server.requests == []


def test_a_provider_header_with_a_line_break_is_refused_before_a_run(
    openai_server: OpenAIServer,
) -> None:
    with pytest.raises(ConfigError, match=r"headers\.X-Note: .*line break"):
        OpenAIProvider(openai_server.base_url, headers={"X-Note": "line\nbreak"})
    assert openai_server.requests == []


def test_an_eval_file_with_url_credentials_and_a_key_variable_fails_before_any_sample(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", KEY)
    target = {"provider": "vllm", "base_url": _with_credentials(openai_server.base_url)}
    config = parse_eval(_eval(openai_server, target))
    with pytest.raises(ConfigError) as caught:
        run_eval(config, store=tmp_path / "runs.db")
    message = str(caught.value)
    assert "base_url" in message and "VLLM_API_KEY" in message
    _assert_no_secret(message)
    assert openai_server.requests == []


def test_the_basic_auth_token_made_from_url_credentials_is_never_stored(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """The HTTP client sends ``user:password@`` as ``Basic base64(user:password)``; an error
    body or an answer that echoes that header must not bring the base64 form into the store."""
    import base64

    token = base64.b64encode(f"gwuser:{PASSWORD}".encode()).decode()
    openai_server.enqueue(
        Status(400, json_body={"error": {"message": f"rejected Authorization: Basic {token}"}}),
        Reply(f"you sent Basic {token}"),
    )
    db = tmp_path / "runs.db"
    result = run(
        name="basic-echo",
        dataset=ROWS[:2],
        scorers=["exact_match"],
        provider=OpenAIProvider(_with_credentials(openai_server.base_url)),
        model="m",
        retries=0,
        concurrency=1,
        store=str(db),
        max_error_rate=1.0,
    )
    assert openai_server.requests[0].headers["Authorization"] == f"Basic {token}"
    texts = [s.error or s.prediction or "" for s in result.samples]
    assert any("[redacted]" in t for t in texts), texts
    for path in tmp_path.iterdir():  # the database, its WAL and journal files
        assert token.encode() not in path.read_bytes(), path.name
