"""The threshold grader's verdicts, their stored form, and their redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from aieval import Store, run
from aieval._records import SampleRecord, ScoreRecord, redact_record
from aieval._types import Example
from aieval.core import (
    CriterionValue,
    GateOutcome,
    GradeInput,
    Reason,
    ThresholdGrader,
    Verdict,
)
from aieval.errors import StoreError
from aieval.scorers import exact_match, scorer


def _grade(record: SampleRecord, threshold: float = 0.5) -> Verdict:
    example = Example(id=record.id, input=record.input)
    return ThresholdGrader(threshold).grade(GradeInput(record, example))


def _record(**scores: ScoreRecord) -> SampleRecord:
    return SampleRecord(id="s", index=0, input="q", scores=dict(scores))


def test_every_score_at_or_above_the_threshold_passes() -> None:
    verdict = _grade(_record(a=ScoreRecord(0.5), b=ScoreRecord(1.0)))
    assert verdict == Verdict(passed=True, weighted_score=75.0, grader="threshold")


def test_a_score_below_the_threshold_fails_naming_it() -> None:
    verdict = _grade(_record(a=ScoreRecord(0.25), b=ScoreRecord(1.0)), threshold=0.5)
    assert not verdict.passed and verdict.weighted_score == 62.5
    assert verdict.reasons == (Reason("threshold", "a", "a below the pass threshold 0.5"),)


def test_a_malformed_judge_never_passes_and_keeps_its_zero() -> None:
    judge = ScoreRecord(0.0, metadata={"parse_failures": 1}, unreadable="not JSON")
    verdict = _grade(_record(judge=judge), threshold=0.0)
    assert not verdict.passed and verdict.weighted_score == 0.0
    assert verdict.reasons == (Reason("malformed", "judge", "not JSON"),)


def test_a_target_error_scores_zero_and_is_the_reason() -> None:
    record = _record()
    record.error = "TimeoutError: slow"
    verdict = _grade(record)
    assert verdict == Verdict(
        passed=False,
        reasons=(Reason("error", "target", "TimeoutError: slow"),),
        weighted_score=0.0,
    )


def test_a_sample_every_scorer_found_not_applicable_is_not_passed() -> None:
    verdict = _grade(_record(a=ScoreRecord(None)))
    assert not verdict.passed and verdict.weighted_score is None and verdict.reasons == ()


def test_the_stored_form_round_trips() -> None:
    verdict = Verdict(
        passed=False,
        reasons=(Reason("gate", "g", "failed"),),
        weighted_score=41.5,
        grade="F",
        gates=(GateOutcome("g", False, "failed"), GateOutcome("h", True)),
        criteria={"c": CriterionValue(0.4, adjusted=0.35, weight=2.0, floor=0.5, kind="judge")},
        grader="workflow",
        workflow={"grade": "F"},
    )
    assert Verdict.from_dict(verdict.to_dict()) == verdict
    assert hash(verdict) == hash(Verdict.from_dict(verdict.to_dict()))


def test_a_stored_verdict_without_its_pass_flag_is_refused_naming_the_sample() -> None:
    with pytest.raises(StoreError, match=r"sample 'x'.*'passed'"):
        Verdict.from_dict({"grade": "A"}, "sample 'x'")


def test_redaction_reaches_the_verdicts_reasons() -> None:
    record = _record()
    record.error = "401: bad key sk-secret-123"
    record.verdict = _grade(record)
    redact_record(record, frozenset({"sk-secret-123"}))
    assert record.verdict is not None
    assert all("sk-secret-123" not in r.text for r in record.verdict.reasons)


def test_a_plain_run_stores_the_threshold_verdict(tmp_path: Path) -> None:
    @scorer
    def judge_like(prediction: str, expected: str) -> object:
        from aieval import Score

        meta = {"parse_failures": int(prediction == "?")}
        return Score(
            0.0 if prediction == "?" else 1.0,
            metadata=meta,
            unreadable=None if prediction != "?" else "no verdict",
        )

    rows = [
        {"id": "a", "prompt": "p", "expected": "x", "prediction": "x"},
        {"id": "b", "prompt": "p", "expected": "x", "prediction": "?"},
    ]
    db = tmp_path / "runs.db"
    result = run(name="plain", dataset=rows, scorers=[exact_match, judge_like], store=str(db))
    assert [s.passed for s in result.samples] == [True, False]
    assert result.malformed == {"judge_like": (1, 2)}  # malformed, of the judged
    store = Store(str(db))
    stored = {s.id: s for s in store.iter_samples(result.id)}
    store.close()
    assert stored["b"].scores["judge_like"].unreadable == "no verdict"
    assert stored["b"].scores["judge_like"].metadata == {"parse_failures": 1}
    assert stored["b"].verdict == result.samples[1].verdict
    assert stored["b"].verdict is not None
    assert stored["b"].verdict.reasons == (
        Reason("malformed", "judge_like", "no verdict"),
        Reason("threshold", "exact_match", "exact_match below the pass threshold 0.5"),
        Reason("threshold", "judge_like", "judge_like below the pass threshold 0.5"),
    )
