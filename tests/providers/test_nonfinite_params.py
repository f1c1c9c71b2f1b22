"""A NaN or infinite number in a request is refused before any call: JSON has no such value,
so the OpenAI path would send a body that is not JSON (a lenient server answers anyway) and the
Anthropic SDK fails to encode it (it was reported as an 'invalid response')."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer
from tests.support.provider_calls import request_error

from aieval import Store, run
from aieval.errors import ConfigError, ProviderRequestError
from aieval.providers import AnthropicProvider, ChatRequest, OpenAIProvider
from aieval.runner import load_eval
from aieval.scorers import exact_match, llm_judge

ROWS = [{"id": f"r{i}", "prompt": f"q{i}", "expected": f"echo: q{i}"} for i in range(2)]
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"temperature": math.nan}, "params.temperature", id="nan-temperature"),
        pytest.param({"temperature": 0, "top_p": math.inf}, "params.top_p", id="inf"),
        pytest.param({"max_tokens": -math.inf}, "params.max_tokens", id="minus-inf"),
        pytest.param({"logit_bias": {"50256": -math.inf}}, "params.logit_bias.50256", id="nested"),
        pytest.param({"weights": [0.5, math.nan]}, "params.weights[1]", id="in-a-list"),
    ],
)
def test_run_refuses_a_non_finite_param_before_any_call(
    openai_server: OpenAIServer, tmp_path: Path, params: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        run(name="nan", dataset=ROWS, scorers=[exact_match], provider="openai-compatible",
            base_url=openai_server.base_url, model="m", params=params,
            store=tmp_path / "runs.db")  # fmt: skip
    message = str(caught.value)
    assert message.startswith(f"{field}: ") and "not a finite number" in message
    assert openai_server.requests == []
    with Store(tmp_path / "runs.db") as store:
        assert store.count_runs() == 0


@pytest.mark.parametrize("word", [".nan", ".inf", "-.inf"])
def test_an_eval_file_refuses_a_non_finite_temperature(
    openai_server: OpenAIServer, tmp_path: Path, word: str
) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text(
        "name: nan\n"
        "dataset: {rows: [{id: r0, prompt: q, expected: a}]}\n"
        f"target: {{provider: openai-compatible, model: m, base_url: '{openai_server.base_url}',"
        f" params: {{temperature: {word}}}}}\n"
        "scorers: [exact_match]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"params\.temperature: .* not a finite number"):
        load_eval(path)


async def _refused(provider: Any, request: ChatRequest) -> str:
    try:
        with pytest.raises(ConfigError) as caught:
            await provider.generate(request)
        return str(caught.value)
    finally:
        await provider.aclose()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("request_kwargs", "field"),
    [
        pytest.param({"temperature": math.nan}, "temperature", id="temperature"),
        pytest.param({"params": {"top_p": math.inf}}, "params.top_p", id="params"),
        pytest.param(
            {"response_schema": {"type": "number", "maximum": math.inf}},
            "response_schema.maximum",
            id="schema",
        ),
    ],
)
def test_the_providers_refuse_a_non_finite_number_without_sending(
    openai_server: OpenAIServer, kind: str, request_kwargs: dict[str, Any], field: str
) -> None:
    if kind == "anthropic":
        pytest.importorskip("anthropic")
        provider: Any = AnthropicProvider("sk-ant-nan-123456", base_url=openai_server.root_url)
    else:
        provider = OpenAIProvider(openai_server.base_url)
    request = ChatRequest(model="m", messages=MESSAGES, **request_kwargs)
    message = asyncio.run(_refused(provider, request))
    assert message.startswith(f"{field}: ") and "not a finite number" in message
    assert "invalid response" not in message
    assert openai_server.requests == []


def test_a_value_json_cannot_carry_is_a_request_error_not_a_crash(
    openai_server: OpenAIServer,
) -> None:
    """A param that is no JSON value at all (a set) fails the call as a ProviderRequestError."""

    request = ChatRequest(model="m", messages=MESSAGES, params={"stop": {"a"}})
    error = request_error(
        lambda: OpenAIProvider(openai_server.base_url), request, ProviderRequestError
    )
    assert "cannot encode the request as JSON" in str(error) and not error.retryable
    assert openai_server.requests == []


def test_a_judge_refuses_a_non_finite_temperature() -> None:
    with pytest.raises(ConfigError, match=r"judge 'llm_judge': temperature: nan is not a finite"):
        llm_judge("Is it right?", provider="openai-compatible", temperature=math.nan)
