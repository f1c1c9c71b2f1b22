"""429 storms end with every sample answered; a hung, retried request shows its whole latency."""

from pathlib import Path
from typing import Any

from tests.support.openai_server import Hang, OpenAIServer, Reply, Status

from aieval import run
from aieval.scorers import exact_match

ROWS = [{"id": f"q{i}", "prompt": f"say {i}", "expected": f"answer {i}"} for i in range(60)]


def answer(body: dict[str, Any]) -> Reply:
    return Reply(f"answer {body['messages'][-1]['content'].split()[-1]}")


def go(server: OpenAIServer, tmp_path: Path, **kwargs: Any):  # type: ignore[no-untyped-def]
    options: dict[str, Any] = dict(
        name="storm",
        dataset=ROWS,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=server.base_url,
        model="m",
        cache=False,
        store=tmp_path / "runs.db",
    )
    options.update(kwargs)
    return run(**options)


def test_a_429_storm_ends_with_no_failed_sample(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    seen: set[str] = set()

    def first_call_refused(body: dict[str, Any]) -> Status | Reply:
        prompt = body["messages"][-1]["content"]
        if prompt in seen:
            return answer(body)
        seen.add(prompt)
        return Status(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.05"})

    openai_server.responder = first_call_refused
    result = go(openai_server, tmp_path, concurrency=8)
    assert result.error_count == 0 and result.ok
    assert result.metrics["exact_match"] == 1.0
    assert [s.retries for s in result.samples] == [1] * len(ROWS)


def test_a_hung_then_retried_call_reports_its_total_latency(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.enqueue(Hang())
    openai_server.responder = answer
    # the first attempt hangs for good; the second, answered at once, must fit in the timeout
    # even on a loaded machine
    result = go(openai_server, tmp_path, dataset=ROWS[:1], timeout=2.0)
    (sample,) = result.samples
    assert sample.error is None and sample.retries == 1  # two attempts
    assert sample.latency_s is not None and sample.latency_s >= 2.0
    assert sample.calls[0].latency_s == sample.latency_s
