"""run() against a real loopback OpenAI-compatible server through the real HTTP client."""

import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import Hang, OpenAIServer, Reply, Status

from aieval import Store, run
from aieval.scorers import exact_match

ROWS = [{"id": f"q{i}", "prompt": f"say {i}", "expected": f"answer {i}"} for i in range(20)]


def answer(body: dict[str, Any]) -> Reply:
    n = body["messages"][-1]["content"].split()[-1]
    return Reply(f"answer {n}")


def go(server: OpenAIServer, tmp_path: Path, **kwargs: Any):  # type: ignore[no-untyped-def]
    options: dict[str, Any] = dict(
        name="live",
        dataset=ROWS,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=server.base_url,
        model="m",
        store=tmp_path / "runs.db",
    )
    options.update(kwargs)
    return run(**options)


def test_answers_are_scored_and_calls_recorded(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = answer
    result = go(openai_server, tmp_path, params={"temperature": 0})
    assert result.metrics["exact_match"] == 1.0
    assert result.provider == "openai-compatible"
    sample = result.samples[0]
    assert sample.calls[0].purpose == "target" and sample.calls[0].input_tokens
    assert result.summary.input_tokens > 0 and result.latency["p50"] is not None


def test_second_deterministic_run_is_served_from_the_cache(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = answer
    go(openai_server, tmp_path, params={"temperature": 0})
    first = len(openai_server.requests)
    again = go(openai_server, tmp_path, params={"temperature": 0})
    assert len(openai_server.requests) == first  # nothing new reached the server
    assert all(s.cached for s in again.samples) and again.summary.cached == 20


def test_429_with_retry_after_then_success(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.enqueue(
        Status(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.3"})
    )
    openai_server.responder = answer
    started = time.perf_counter()
    result = go(openai_server, tmp_path, dataset=ROWS[:1])
    assert time.perf_counter() - started >= 0.3
    assert result.samples[0].retries == 1 and result.metrics["exact_match"] == 1.0


def test_server_errors_and_timeouts_become_sample_errors(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    def respond(body: dict[str, Any]) -> Any:
        n = int(body["messages"][-1]["content"].split()[-1])
        if n == 3:
            return Status(500, {"error": {"message": "overloaded"}})
        if n == 4:
            return Hang()
        return answer(body)

    openai_server.responder = respond
    # q4 hangs for good, so any timeout catches it; 2 s leaves the 18 echoed answers room on a
    # loaded machine, where 0.5 s timed out answered calls too
    result = go(openai_server, tmp_path, retries=1, timeout=2.0)
    by_id = {s.id: s for s in result.samples}
    assert "ProviderServerError" in (by_id["q3"].error or "")
    assert "ProviderTimeoutError" in (by_id["q4"].error or "")
    assert sum(1 for s in result.samples if s.error) == 2
    assert result.metrics["exact_match"] == 1.0  # the 18 answered samples are all correct
    assert Store(tmp_path / "runs.db").get_run(result.id).status == "completed"


def test_missing_credentials_fail_before_any_sample(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SARMALINK_BASE_URL", raising=False)
    monkeypatch.delenv("SARMALINK_API_KEY", raising=False)
    from aieval.errors import UserError

    with pytest.raises(UserError, match="SARMALINK"):
        run(
            name="x",
            dataset=ROWS,
            scorers=[exact_match],
            provider="sarmalink",
            model="smart",
            store=tmp_path / "runs.db",
        )


def test_prompt_template_and_system_prompt(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = answer
    go(
        openai_server,
        tmp_path,
        dataset=ROWS[:1],
        prompt_template="Customer asks: {prompt}",
        system_prompt="Be brief.",
    )
    messages = openai_server.requests[0].body["messages"]
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Customer asks: say 0"},
    ]
