"""A credential among the request parameters is refused: it would go into the JSON body, where
no chat API reads it, so it would neither authenticate nor stay out of every request body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer

from aieval import Store, run
from aieval.errors import ConfigError
from aieval.providers import AnthropicProvider, ChatRequest, OpenAIProvider
from aieval.runner import RunSpec, parse_eval, run_eval, run_spec
from aieval.scorers import exact_match

KEY = "sk-live-body-0a1b2c3d4e5f6a7b"
ROWS = [{"id": f"r{i}", "prompt": f"q{i}", "expected": f"echo: q{i}"} for i in range(2)]


def _eval(server: OpenAIServer, target: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "creds",
        "dataset": {"rows": ROWS},
        "target": {
            "provider": "openai-compatible",
            "model": "m",
            "base_url": server.base_url,
            **target,
        },
        "scorers": ["exact_match"],
        "settings": {"retries": 0},
    }


@pytest.mark.parametrize("name", ["api_key", "API-Key", "x-api-key", "Authorization", "apikey"])
def test_run_refuses_a_key_among_the_params_before_any_call(
    openai_server: OpenAIServer, tmp_path: Path, name: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        run(name="creds", dataset=ROWS, scorers=[exact_match], provider="openai-compatible",
            base_url=openai_server.base_url, model="m", params={"temperature": 0, name: KEY},
            store=tmp_path / "runs.db")  # fmt: skip
    message = str(caught.value)
    assert f"params.{name}" in message
    assert "api_key=" in message and "headers" in message  # where a key does go
    assert KEY not in message
    assert openai_server.requests == []
    with Store(tmp_path / "runs.db") as store:
        assert store.count_runs() == 0  # refused before a run was stored


def test_an_eval_file_refuses_target_params_api_key(openai_server: OpenAIServer) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_eval(_eval(openai_server, {"params": {"api_key": KEY}}))
    message = str(caught.value)
    assert "target.params" in message and "params.api_key" in message
    assert KEY not in message
    assert openai_server.requests == []


def test_a_run_spec_refuses_params_api_key(openai_server: OpenAIServer, tmp_path: Path) -> None:
    spec = RunSpec(name="creds", dataset=ROWS, scorers=["exact_match"],
                   provider="openai-compatible", base_url=openai_server.base_url, model="m",
                   params={"api_key": KEY}, store=str(tmp_path / "runs.db"))  # fmt: skip
    with pytest.raises(ConfigError, match=r"params\.api_key"):
        run_spec(spec)
    assert openai_server.requests == []


def test_the_key_as_an_authorization_header_authenticates(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """The way an eval file (or a server request) gives a key of its own: a header."""
    config = parse_eval(_eval(openai_server, {"headers": {"Authorization": f"Bearer {KEY}"}}))
    (result,) = run_eval(config, store=tmp_path / "runs.db")
    assert result.metrics["exact_match"] == 1.0
    assert len(openai_server.requests) == 2
    for request in openai_server.requests:
        assert request.headers["Authorization"] == f"Bearer {KEY}"
        assert KEY not in json.dumps(request.body)
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("runs.db*"))
    assert KEY.encode() not in stored


async def test_openai_provider_refuses_a_request_carrying_a_key(
    openai_server: OpenAIServer,
) -> None:
    provider = OpenAIProvider(openai_server.base_url)
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "q"}],
                          params={"api_key": KEY})  # fmt: skip
    try:
        with pytest.raises(ConfigError, match=r"params\.api_key") as caught:
            await provider.generate(request)
    finally:
        await provider.aclose()
    assert KEY not in str(caught.value)
    assert openai_server.requests == []


async def test_anthropic_provider_refuses_a_request_carrying_a_key(
    openai_server: OpenAIServer,
) -> None:
    pytest.importorskip("anthropic")
    provider = AnthropicProvider("sk-ant-test-1234567", base_url=openai_server.root_url)
    request = ChatRequest(model="c", messages=[{"role": "user", "content": "q"}],
                          params={"x-api-key": KEY})  # fmt: skip
    try:
        with pytest.raises(ConfigError, match=r"params\.x-api-key"):
            await provider.generate(request)
    finally:
        await provider.aclose()
    assert openai_server.requests == []
