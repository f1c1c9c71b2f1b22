"""Text holding a lone surrogate (a non-UTF-8 byte read with ``surrogateescape``) reaches the
Anthropic Messages API as a JSON ``\\udcXX`` escape, as it does on the OpenAI path; an SDK that
cannot send it gives an error that says so, never an "invalid response"."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply, Status

from aieval import Store, run
from aieval.errors import ProviderHTTPError, ProviderRequestError, RateLimitError
from aieval.providers import AnthropicProvider, ChatRequest
from aieval.scorers import exact_match

# skipped without the SDK, which is imported only when a test runs: each xdist worker collects
# this module, and importing anthropic there would cost each ~1 s of CPU
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("anthropic") is None, reason="the anthropic SDK is not installed"
)

KEY = "sk-ant-test-surrogate-4321"
BROKEN = "caf\udc80 au lait"


def _request(**kwargs: Any) -> ChatRequest:
    messages = [
        {"role": "system", "content": f"Quote {BROKEN} exactly."},
        {"role": "user", "content": f"say {BROKEN}"},
    ]
    return ChatRequest(model="claude-test", messages=messages, **kwargs)


async def test_a_lone_surrogate_is_sent_and_answered(openai_server: OpenAIServer) -> None:
    provider = AnthropicProvider(KEY, base_url=openai_server.root_url, headers={"X-Team": "e"})
    schema = {"type": "object", "properties": {"c": {"type": "string"}}}
    request = _request(temperature=0, max_tokens=50, response_schema=schema,
                       params={"stop": "END", "top_k": 5, "seed": 1},
                       headers={"X-Route": "blue"})  # fmt: skip
    try:
        response = await provider.generate(request)
    finally:
        await provider.aclose()
    assert response.text == f"echo: say {BROKEN}"  # the answer keeps it too
    (seen,) = openai_server.requests
    assert seen.path == "/v1/messages"
    body = seen.body
    assert body["messages"] == [{"role": "user", "content": f"say {BROKEN}"}]
    assert body["system"] == f"Quote {BROKEN} exactly."
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("claude-test", 50, 0)
    assert (body["stop_sequences"], body["top_k"]) == (["END"], 5) and "seed" not in body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    sent_key = seen.headers.get("x-api-key") or seen.headers["Authorization"].split()[-1]
    assert sent_key == KEY
    assert (seen.headers["X-Team"], seen.headers["X-Route"]) == ("e", "blue")
    assert seen.headers["anthropic-version"]
    assert seen.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    ("status", "error_type"),
    [pytest.param(400, ProviderHTTPError, id="400"), pytest.param(429, RateLimitError, id="429")],
)
async def test_errors_keep_their_meaning_for_such_a_request(
    openai_server: OpenAIServer, status: int, error_type: type[Exception]
) -> None:
    provider = AnthropicProvider(KEY, base_url=openai_server.root_url)
    openai_server.enqueue(Status(status, headers={"retry-after": "2"}))
    try:
        with pytest.raises(error_type, match=f"test server error {status}"):
            await provider.generate(_request())
    finally:
        await provider.aclose()


def test_a_run_through_anthropic_evaluates_such_a_row(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", openai_server.root_url)
    openai_server.responder = lambda body: Reply(BROKEN)
    rows = [{"id": "a", "prompt": f"say {BROKEN}", "expected": BROKEN},
            {"id": "b", "prompt": "plain", "expected": BROKEN}]  # fmt: skip
    result = run(name="surrogates", dataset=rows, scorers=[exact_match], provider="anthropic",
                 model="claude-test", store=tmp_path / "runs.db", retries=0)  # fmt: skip
    assert result.error_count == 0 and result.metrics["exact_match"] == 1.0
    sent = [r.body["messages"][0]["content"] for r in openai_server.requests]
    assert sorted(sent) == sorted([f"say {BROKEN}", "plain"])
    with Store(tmp_path / "runs.db") as store:
        assert store.get_sample(result.id, "a").prediction == BROKEN


async def test_an_sdk_that_cannot_send_it_says_so_naming_the_field(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SDK without raw request bodies is left to encode the request itself; when it cannot,
    the error names the field and says what is wrong, instead of blaming the response."""
    from aieval.providers import _anthropic

    monkeypatch.setattr(_anthropic, "_takes_raw_body", lambda post: False)
    provider = AnthropicProvider(KEY, base_url=openai_server.root_url)
    request = ChatRequest(model="c", messages=[{"role": "user", "content": f"say {BROKEN}"}])
    try:
        with pytest.raises(ProviderRequestError) as caught:
            await provider.generate(request)
    finally:
        await provider.aclose()
    message = str(caught.value)
    assert "messages[0].content" in message and "lone surrogate" in message
    assert "response" not in message
    assert caught.value.retryable is False
    assert openai_server.requests == []
    assert BROKEN not in message  # the text itself is not quoted back
