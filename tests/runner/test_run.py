import asyncio
import math
import threading
from pathlib import Path
from typing import Any

import pytest

from aieval import Example, Score, Store, run, run_async, scorer
from aieval.errors import ConfigError, DatasetError
from aieval.scorers import exact_match, token_f1

ROWS = [
    {
        "id": f"r{i}",
        "prompt": f"question {i}",
        "expected": "the answer",
        "prediction": "the answer" if i % 3 else "something else",
        "metadata": {"k": i % 2},
    }
    for i in range(30)
]


def test_recorded_predictions_are_scored(tmp_path: Path) -> None:
    result = run(name="rec", dataset=ROWS, scorers=[exact_match, token_f1], store=tmp_path / "s.db")
    correct = sum(1 for r in ROWS if r["prediction"] == r["expected"])
    assert result.metrics["exact_match"] == pytest.approx(correct / len(ROWS))
    assert result.pass_rate == pytest.approx(correct / len(ROWS))
    assert result.status == "completed"
    assert [s.id for s in result.samples] == [r["id"] for r in ROWS]
    stored = Store(tmp_path / "s.db").get_run(result.id)
    assert stored.status == "completed" and stored.n_examples == 30
    assert stored.config["scorers"][0]["name"] == "exact_match"


def test_scorer_failures_are_recorded_per_sample() -> None:
    def raising(prediction: str, expected: str) -> float:
        raise ValueError("boom")

    async def fine(prediction: str, expected: str) -> float:
        return 1.0

    rows = [{"id": f"r{i}", "prompt": "p", "prediction": "x"} for i in range(6)]

    @scorer(name="mixed")
    def mixed(prediction: str, _expected: str, *, example: Example) -> Any:
        value = [1.0, math.nan, 1.5, "high", None, 0.25][int(example.id[1:])]
        return value

    result = run(name="errs", dataset=rows, scorers=[mixed, raising, fine], store=False)
    by_id = {s.id: s for s in result.samples}
    assert by_id["r0"].scores["mixed"].value == 1.0
    assert "NaN" in by_id["r1"].scores["mixed"].error
    assert "outside 0..1" in by_id["r2"].scores["mixed"].error
    assert "returned str" in by_id["r3"].scores["mixed"].error
    assert "returned NoneType" in by_id["r4"].scores["mixed"].error
    assert by_id["r5"].scores["mixed"].value == 0.25
    assert all("ValueError: boom" in s.scores["raising"].error for s in result.samples)
    assert all(s.scores["fine"].value == 1.0 for s in result.samples)
    assert result.summary.scorers["mixed"].errors == 4
    assert result.metrics["mixed"] == pytest.approx((1.0 + 0.25) / 2)
    assert not any(s.passed for s in result.samples)


def test_score_objects_and_unscored_values() -> None:
    @scorer
    def judged(prediction: str, _expected: str) -> Score:
        if prediction == "skip":
            return Score(None, reason="not applicable")
        return Score(0.7, raw=7, reason="ok")

    rows = [{"prompt": "a", "prediction": "x"}, {"prompt": "b", "prediction": "skip"}]
    result = run(name="s", dataset=rows, scorers=[judged], store=False)
    first, second = result.samples
    assert (first.scores["judged"].value, first.scores["judged"].raw) == (0.7, 7)
    assert second.scores["judged"].value is None and second.scores["judged"].error is None
    assert result.metrics["judged"] == pytest.approx(0.7)


def test_callable_targets_sync_and_async_with_bounded_concurrency() -> None:
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    async def agent(example: Example) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return example.prompt.upper()

    def sync_agent(example: Example) -> str:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        threading.Event().wait(0.01)
        with lock:
            in_flight -= 1
        return example.prompt.upper()

    rows = [{"prompt": f"p{i}", "expected": f"P{i}"} for i in range(40)]
    for target in (agent, sync_agent):
        peak = 0
        result = run(
            name="t", dataset=rows, scorers=[exact_match], target=target, concurrency=5, store=False
        )
        assert result.metrics["exact_match"] == 1.0
        assert 1 < peak <= 5
        assert all(s.latency_s is not None and s.latency_s >= 0.009 for s in result.samples)


def test_target_that_raises_is_a_sample_error_not_a_crash() -> None:
    def agent(example: Example) -> str:
        if example.id == "1":
            raise RuntimeError("tool crashed")
        return "ok"

    rows = [{"prompt": "a", "expected": "ok"}, {"prompt": "b", "expected": "ok"}]
    result = run(name="t", dataset=rows, scorers=[exact_match], target=agent, store=False)
    first, second = result.samples
    assert first.passed and first.scores["exact_match"].value == 1.0
    assert second.error == "target raised RuntimeError: tool crashed"
    assert second.scores == {} and not second.passed
    assert result.summary.target_errors == 1


def test_target_timeout() -> None:
    async def slow(example: Example) -> str:
        await asyncio.sleep(5)
        return "late"

    result = run(
        name="t",
        dataset=[{"prompt": "a"}],
        scorers=[exact_match],
        target=slow,
        timeout=0.05,
        store=False,
    )
    assert result.samples[0].error == "target timed out after 0.05 s"


def test_context_parameters_are_filled_only_when_declared() -> None:
    seen: dict[str, Any] = {}

    @scorer
    def ctx(
        prediction: str,
        _expected: str,
        *,
        prompt: str | None = None,
        example: Example | None = None,
        model: str | None = None,
    ) -> float:
        seen.update(prompt=prompt, example=example, model=model)
        return 1.0

    run(
        name="c",
        dataset=[{"id": "x", "prompt": "hello", "predictions": {"m1": "p"}}],
        scorers=[ctx],
        model="m1",
        store=False,
    )
    assert seen["prompt"] == "hello" and seen["model"] == "m1"
    assert isinstance(seen["example"], Example) and seen["example"].id == "x"


def test_configuration_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match="nothing to evaluate"):
        run(name="x", dataset=[{"prompt": "a"}], scorers=[exact_match], store=False)
    with pytest.raises(ConfigError, match="scorers must be a list"):
        run(name="x", dataset=ROWS, scorers=exact_match, store=False)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown scorer 'nope'"):
        run(name="x", dataset=ROWS, scorers=["nope"], store=False)
    with pytest.raises(ConfigError, match="share the name 'token_f1'"):
        run(name="x", dataset=ROWS, scorers=[token_f1, token_f1], store=False)
    with pytest.raises(DatasetError, match="duplicate id"):
        run(
            name="x",
            dataset=[{"id": 1, "prompt": "a"}, {"id": 1, "prompt": "b"}],
            scorers=[exact_match],
            store=False,
        )
    with pytest.raises(ConfigError, match="provider= needs model="):
        run(name="x", dataset=ROWS, scorers=[exact_match], provider="vllm", store=False)


def test_missing_prediction_on_one_row_is_a_sample_error() -> None:
    rows = [{"prompt": "a", "prediction": "x"}, {"prompt": "b"}]
    result = run(name="x", dataset=rows, scorers=[exact_match], store=False)
    assert result.samples[1].error == "row has no recorded prediction and no target was given"


async def test_sync_run_inside_a_running_loop_and_async_api() -> None:
    result = run(name="nb", dataset=ROWS[:3], scorers=[exact_match], store=False)
    assert result.summary.samples == 3
    result = await run_async(name="nb", dataset=ROWS[:3], scorers=[exact_match], store=False)
    assert result.summary.samples == 3


def test_progress_callback() -> None:
    calls: list[tuple[int, int]] = []
    run(
        name="p",
        dataset=ROWS,
        scorers=[exact_match],
        store=False,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls[-1] == (30, 30) and len(calls) == 30


def test_with_options_binds_keyword_options() -> None:
    strict = token_f1.with_options(name="token_f1_cs", case_sensitive=True)
    rows = [{"prompt": "q", "expected": "Paris", "prediction": "paris"}]
    result = run(name="o", dataset=rows, scorers=[token_f1, strict], store=False)
    assert result.metrics == {"token_f1": 1.0, "token_f1_cs": 0.0}
