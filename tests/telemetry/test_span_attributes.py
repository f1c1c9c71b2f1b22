"""Span attributes, evaluation events and timings: pure functions of stored records."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval import CallRecord, SampleRecord, ScoreRecord
from aieval.core import GateOutcome, Verdict
from aieval.core._stored import adapt_record
from aieval.report import example_numbers
from aieval.telemetry import RunHeader
from aieval.telemetry._attributes import (
    call_attributes,
    error_type,
    evaluation_events,
    layout,
    run_end_attributes,
    run_start_attributes,
    sample_attributes,
)

HEADER = RunHeader("r1", "support-qa", model="gpt-x", provider="openai", n_examples=3)


def stored(record: SampleRecord) -> SampleRecord:
    """``record`` as a store reads it back (a row without a verdict, of a run at 0.5)."""
    return adapt_record(record, 0.5)


latencies = st.one_of(st.none(), st.floats(min_value=0.0, max_value=600.0))


@given(
    sample_latency=latencies,
    call_latencies=st.lists(latencies, max_size=6),
    end=st.floats(min_value=1e9, max_value=2e9),
)
def test_layout_nests_calls_one_after_another_inside_the_sample(
    sample_latency: float | None, call_latencies: list[float | None], end: float
) -> None:
    calls = [
        CallRecord("target" if i == 0 else "judge:j", latency_s=v)
        for i, v in enumerate(call_latencies)
    ]
    timing = layout(SampleRecord("s", 0, "x", latency_s=sample_latency, calls=calls), end)
    assert timing.end_ns == int(end * 1e9) and timing.start_ns <= timing.end_ns
    cursor = timing.start_ns
    for item, latency in zip(timing.calls, call_latencies, strict=True):
        assert item.start_ns == cursor and item.end_ns >= item.start_ns
        assert item.end_ns - item.start_ns == (int(latency * 1e9) if latency else 0)
        cursor = item.end_ns
    assert cursor <= timing.end_ns
    own = int(sample_latency * 1e9) if sample_latency else 0
    assert timing.end_ns - timing.start_ns == max(own, cursor - timing.start_ns)


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        pytest.param(
            SampleRecord("a", 0, "x", scores={"m": ScoreRecord(0.25), "n": ScoreRecord(0.75)}),
            50.0,
            id="mean-of-scores",
        ),
        pytest.param(
            SampleRecord("a", 0, "x", scores={"m": ScoreRecord(1.0), "n": ScoreRecord(None)}),
            100.0,
            id="failed-scorer-left-out",
        ),
        pytest.param(SampleRecord("a", 0, "x", error="boom"), 0.0, id="target-error-is-zero"),
        pytest.param(SampleRecord("a", 0, "x"), None, id="nothing-scored"),
        pytest.param(
            SampleRecord(
                "a",
                0,
                "x",
                scores={"m": ScoreRecord(0.0)},
                extra={"evaluation": {"weighted_score": 87.5}},
            ),
            87.5,
            id="graded-uses-evaluation",
        ),
    ],
)
def test_weighted_score_is_the_reports(sample: SampleRecord, expected: float | None) -> None:
    sample = stored(sample)
    attrs = sample_attributes(HEADER, sample)
    assert attrs.get("aieval.weighted_score") == expected == example_numbers(sample).weighted_score


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=8))
def test_weighted_score_is_100_times_the_mean(values: list[float]) -> None:
    sample = stored(
        SampleRecord("a", 0, "x", scores={f"s{i}": ScoreRecord(v) for i, v in enumerate(values)})
    )
    score = sample_attributes(HEADER, sample)["aieval.weighted_score"]
    assert isinstance(score, float) and 0.0 <= score <= 100.0
    assert score == pytest.approx(100 * sum(values) / len(values))


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param("ProviderTimeoutError: no answer in 60 s", "ProviderTimeoutError", id="class"),
        pytest.param("asyncio.TimeoutError: late", "asyncio.TimeoutError", id="dotted"),
        pytest.param("boom", "_OTHER", id="plain-text"),
        pytest.param("interrupted before every sample finished", "_OTHER", id="sentence"),
        pytest.param("", "_OTHER", id="empty"),
    ],
)
def test_error_type(message: str, expected: str) -> None:
    assert error_type(message) == expected


def test_sample_attributes_of_a_graded_sample_with_gate_failures() -> None:
    target = CallRecord(
        "target", "openai", "gpt-x-2026", latency_s=0.4, input_tokens=12, output_tokens=3
    )
    judge = CallRecord(
        "judge:faith", "openai", "judge-m", latency_s=0.2, input_tokens=50, output_tokens=9
    )
    sample = SampleRecord(
        "q7",
        6,
        "hi",
        passed=False,
        calls=[target, judge],
        scores={
            "faith": ScoreRecord(0.5, reason="half"),
            "broken": ScoreRecord(None, error="ScorerError: bad"),
        },
        verdict=Verdict(
            passed=False,
            weighted_score=41.0,
            grade="F",
            gates=(
                GateOutcome("schema_contract_valid", False, "invalid"),
                GateOutcome("tool_call_schema_valid", True),
                GateOutcome("no_forbidden_tool_invoked", False, "forbidden"),
            ),
            grader="workflow",
            workflow={"grade": "F"},
        ),
    )
    attrs = sample_attributes(HEADER, sample)
    assert attrs["aieval.example.id"] == "q7" and attrs["aieval.example.index"] == 6
    assert attrs["aieval.run.id"] == "r1" and attrs["aieval.run.name"] == "support-qa"
    assert attrs["aieval.passed"] is False and attrs["aieval.grade"] == "F"
    assert attrs["aieval.weighted_score"] == 41.0
    assert attrs["aieval.gate_failures"] == ["schema_contract_valid", "no_forbidden_tool_invoked"]
    assert attrs["aieval.gate_failure_count"] == 2
    assert attrs["aieval.score.faith"] == 0.5 and "aieval.score.broken" not in attrs
    assert attrs["aieval.scorer_error.broken"] == "ScorerError: bad"
    assert attrs["aieval.usage.input_tokens"] == 62 and attrs["aieval.usage.output_tokens"] == 12
    assert (
        attrs["gen_ai.request.model"] == "gpt-x" and attrs["gen_ai.response.model"] == "gpt-x-2026"
    )
    assert attrs["gen_ai.provider.name"] == "openai"
    # token usage lives on the model-call spans only, so backends that sum it do not count twice
    assert not any(key.startswith("gen_ai.usage.") for key in attrs)
    assert all(value is not None for value in attrs.values())


def test_call_attributes_follow_the_genai_conventions() -> None:
    ok = call_attributes(CallRecord("judge:j", "vllm", "m1", 0.1, 7, 2, cost=0.01, retries=1))
    assert ok == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "vllm",
        "gen_ai.system": "vllm",
        "gen_ai.request.model": "m1",
        "gen_ai.response.model": "m1",
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 2,
        "aieval.call.purpose": "judge:j",
        "aieval.call.retries": 1,
        "aieval.call.cached": False,
        "aieval.cost_usd": 0.01,
    }
    failed = call_attributes(CallRecord("target", "openai", "m1", error="RateLimitError: 429"))
    assert failed["error.type"] == "RateLimitError" and "gen_ai.response.model" not in failed


def test_one_evaluation_event_per_scorer() -> None:
    sample = SampleRecord(
        "a",
        0,
        "x",
        scores={
            "f1": ScoreRecord(0.8, reason="close"),
            "judge": ScoreRecord(None, error="ScorerError: x"),
        },
    )
    events = evaluation_events(sample)
    assert [name for name, _ in events] == ["gen_ai.evaluation.result"] * 2
    first, second = (attrs for _, attrs in events)
    assert first == {
        "gen_ai.evaluation.name": "f1",
        "gen_ai.evaluation.score.value": 0.8,
        "gen_ai.evaluation.explanation": "close",
    }
    assert second == {"gen_ai.evaluation.name": "judge", "error.type": "ScorerError"}


def test_long_texts_are_clipped() -> None:
    attrs = sample_attributes(HEADER, stored(SampleRecord("a", 0, "x", error="E: " + "x" * 5000)))
    assert len(str(attrs["aieval.error"])) == 1000


def test_run_attributes_from_header_and_summary() -> None:
    start = run_start_attributes(HEADER)
    assert start["aieval.run.id"] == "r1" and start["gen_ai.request.model"] == "gpt-x"
    assert "aieval.git_sha" not in start
    summary: dict[str, Any] = {
        "samples": 4,
        "passed": 3,
        "pass_rate": 0.75,
        "target_errors": 1,
        "input_tokens": 10,
        "output_tokens": 5,
        "cost": 0.5,
        "scorers": {"em": {"mean": 0.75}, "j": {"mean": None}},
        "evaluation": {"grades": {"A": 3, "F": 1}, "gate_failure_rates": {"g": 0.25}},
    }
    end = run_end_attributes("completed", summary, None)
    assert end["aieval.pass_rate"] == 0.75 and end["aieval.metric.em"] == 0.75
    assert "aieval.metric.j" not in end and end["aieval.grades.F"] == 1
    assert end["aieval.gate_failure_rate.g"] == 0.25 and "aieval.error" not in end
    assert run_end_attributes("failed", None, "boom") == {
        "aieval.run.status": "failed",
        "aieval.error": "boom",
    }


def test_run_header_of_a_live_start_and_a_stored_row_carries_the_same_facts(
    tmp_path: Any,
) -> None:
    """A live run's start and its stored row give one header: the replay's span says the same."""
    from aieval import Store
    from aieval.core import RunStart
    from aieval.telemetry._export import header_of

    with Store(tmp_path / "runs.db") as store:
        run_id = store.create_run(
            name="nightly", model="m-1", provider="openai", dataset="qa.jsonl", n_examples=3
        )
        row = store.get_run(run_id)
    start = RunStart(
        id=row.id, name=row.name, started_at=1.0, model="m-1", provider="openai",
        dataset="qa.jsonl", n_examples=3, store_path="elsewhere", resumed=True,
    )  # fmt: skip
    header = header_of(row)
    assert header == RunHeader.of(start)
    assert (header.name, header.model, header.provider, header.n_examples) == (
        "nightly", "m-1", "openai", 3,
    )  # fmt: skip
