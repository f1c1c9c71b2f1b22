"""``api_key_env`` on providers: the variable's value is the key, an unset variable or a value
that is no variable name is refused before any call, and every message names where a key goes
without showing one."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Status
from tests.support.provider_calls import request_error

from aieval import run
from aieval.errors import ConfigError, ProviderAuthError
from aieval.providers import (
    ChatRequest,
    OpenAIProvider,
    Provider,
    build_provider,
    get_provider,
    register_provider,
)
from aieval.runner import RunSpec, parse_eval
from aieval.scorers import exact_match

KEY = "sk-env-key-5a4b3c2d1e0f9988"
ROWS = [{"id": "r0", "prompt": "q0", "expected": "echo: q0"}]


def _request() -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])


def _answer(provider: Provider) -> str:
    async def call() -> str:
        try:
            return (await provider.generate(_request())).text
        finally:
            await provider.aclose()

    return asyncio.run(call())


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "MY_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def test_a_preset_reads_the_named_variable_instead_of_its_own(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-presets-own-0000")
    openai_server.required_key = KEY
    built = build_provider("openai", base_url=openai_server.base_url, api_key_env="MY_KEY",
                           cache=False)  # fmt: skip
    assert _answer(built) == "echo: hi"
    assert openai_server.requests[0].headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("value", ["", None])
def test_an_unset_or_empty_variable_is_named(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is not None:
        monkeypatch.setenv("MY_KEY", value)
    with pytest.raises(ConfigError) as caught:
        get_provider("openai-compatible", base_url=openai_server.base_url, api_key_env="MY_KEY")
    message = str(caught.value)
    assert "api_key_env: MY_KEY names the environment variable" in message
    assert ("MY_KEY is empty" if value == "" else "MY_KEY is not set") in message
    assert openai_server.requests == []


def test_a_key_where_its_variables_name_belongs_is_refused_unshown(
    openai_server: OpenAIServer,
) -> None:
    with pytest.raises(ConfigError) as caught:
        build_provider("openai-compatible", base_url=openai_server.base_url,
                       api_key_env="sk-pasted-by-mistake-1234")  # fmt: skip
    assert "name* of an environment variable" in str(caught.value)
    assert "sk-pasted" not in str(caught.value)
    with pytest.raises(ConfigError) as in_file:
        parse_eval({"name": "x", "dataset": {"rows": ROWS}, "scorers": ["exact_match"],
                    "target": {"provider": "openai-compatible", "model": "m",
                               "base_url": openai_server.base_url,
                               "api_key_env": "sk-pasted-by-mistake-1234"}})  # fmt: skip
    assert "target.api_key_env: takes the *name*" in str(in_file.value)
    assert "sk-pasted" not in str(in_file.value)


def test_a_key_given_twice_or_to_an_instance_is_refused(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    with pytest.raises(ConfigError, match="api_key= and api_key_env= are both given"):
        get_provider("vllm", api_key="sk-other-1234", api_key_env="MY_KEY")
    instance = OpenAIProvider(openai_server.base_url)
    with pytest.raises(ConfigError, match="apply to a provider name"):
        build_provider(instance, api_key_env="MY_KEY")


def test_a_factory_without_api_key_env_gets_the_key_itself(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    seen: dict[str, Any] = {}

    def factory(**kwargs: Any) -> Provider:
        seen.update(kwargs)
        return OpenAIProvider(openai_server.base_url, api_key=kwargs.get("api_key"), name="own")

    register_provider("own-gateway-keyed", factory)
    built = build_provider("own-gateway-keyed", api_key_env="MY_KEY", cache=False)
    assert seen["api_key"] == KEY and "api_key_env" not in seen
    assert _answer(built) == "echo: hi"


def test_openai_compatible_falls_back_to_openai_api_key_only_without_another_credential(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.required_key = KEY
    assert _answer(build_provider("openai-compatible", base_url=openai_server.base_url,
                                  cache=False)) == "echo: hi"  # fmt: skip
    # a credential of its own (URL credentials here) is not joined by the fallback
    with_user = openai_server.base_url.replace("http://", "http://bob:pw-123456@")
    openai_server.required_key = None
    assert _answer(build_provider("openai-compatible", base_url=with_user,
                                  cache=False)) == "echo: hi"  # fmt: skip
    assert openai_server.requests[-1].headers["Authorization"].startswith("Basic ")


def test_the_401_message_says_what_was_refused_and_where_a_key_goes(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai_server.enqueue(Status(401), Status(401))
    sent = request_error(
        lambda: OpenAIProvider(openai_server.base_url, api_key=KEY, name="gw", key_source="MY_KEY"),
        _request(),
        ProviderAuthError,
    )
    assert "gw: HTTP 401" in str(sent) and "the key from MY_KEY was refused" in str(sent)
    assert "api_key_env: MY_KEY under target:" in str(sent) and KEY not in str(sent)
    unsent = request_error(
        lambda: get_provider("openai-compatible", base_url=openai_server.base_url),
        _request(),
        ProviderAuthError,
    )
    assert "no key was sent" in str(unsent) and "or set OPENAI_API_KEY" in str(unsent)


def test_the_anthropic_preset_takes_api_key_env(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("MY_KEY", KEY)
    built = get_provider("anthropic", base_url=openai_server.root_url, api_key_env="MY_KEY")
    assert _answer(built) == "echo: hi"
    headers = openai_server.requests[0].headers
    assert KEY in (
        headers.get("x-api-key"),
        headers.get("Authorization", "").removeprefix("Bearer "),
    )
    openai_server.enqueue(Status(401))
    refused = request_error(
        lambda: get_provider("anthropic", base_url=openai_server.root_url, api_key_env="MY_KEY"),
        _request(),
        ProviderAuthError,
    )
    assert "the key from MY_KEY was refused" in str(refused)
    assert "or set ANTHROPIC_API_KEY" in str(refused) and KEY not in str(refused)


def test_the_run_stores_the_variables_name_never_its_value(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    openai_server.required_key = KEY
    db = tmp_path / "runs.db"
    result = run(name="stored", dataset=ROWS, scorers=[exact_match], provider="openai-compatible",
                 base_url=openai_server.base_url, model="m", api_key_env="MY_KEY",
                 store=db)  # fmt: skip
    assert result.error_count == 0
    with sqlite3.connect(db) as conn:
        (config,) = conn.execute("SELECT config FROM runs").fetchone()
    spec = RunSpec.model_validate(json.loads(config)["spec"])
    assert spec.target.api_key_env == "MY_KEY"
    assert KEY.encode() not in b"".join(f.read_bytes() for f in tmp_path.glob("runs.db*"))


def test_api_key_env_without_a_provider_target_is_refused() -> None:
    with pytest.raises(ConfigError, match="api_key_env names the key of a provider target"):
        run(name="recorded", dataset=[{**ROWS[0], "prediction": "x"}], scorers=[exact_match],
            api_key_env="MY_KEY", store=False)  # fmt: skip
