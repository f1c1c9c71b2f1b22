"""A comparison needs evidence on both sides: a readable baseline judge, the same answer key and
the same scorer options; otherwise it is inconclusive, naming what differs."""

from __future__ import annotations

from typing import Any

from tests.support.reports import decision_rule, store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.report import compare_runs, decide_promotion
from aieval.report._samples import ExampleNumbers
from aieval.store import Store

N = 80


def _judged(value: float, failures: int) -> ScoreRecord:
    verdict = {"score": None if failures else value * 10, "error": "x" if failures else None}
    meta = {"parse_failures": failures, "samples": 1, "verdicts": [verdict]}
    return ScoreRecord(value, raw=value * 10, metadata=meta)


def _store_run(
    store: Store,
    scores: list[dict[str, ScoreRecord]],
    *,
    expected: list[Any] | None = None,
    config: dict[str, Any] | None = None,
) -> str:
    return store_run(store, [
        SampleRecord(
            id=f"e{i}", index=i, input=f"question {i}", prediction="p",
            expected=expected[i] if expected else "gold", passed=True, scores=scores[i],
        )
        for i in range(N)
    ], config=config)  # fmt: skip


def test_an_unreadable_baseline_judge_is_not_evidence(store: Store) -> None:
    base = _store_run(store, [{"llm_judge": _judged(0.0, 1)} for _ in range(N)])
    cand = _store_run(store, [{"llm_judge": _judged(0.2, 0)} for _ in range(N)])
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "judge_verdicts_readable")
    assert comparison.outcome == "inconclusive" and rule.outcome == "inconclusive"
    assert f"baseline judge llm_judge {N}/{N} (100.0%)" in rule.reason
    assert rule.details["baseline_judges"]["llm_judge"]["parse_failures"] == N


def test_an_unreadable_candidate_judge_still_blocks() -> None:
    base = [ExampleNumbers(id=str(i), passed=True, weighted_score=50.0) for i in range(60)]
    cand = [ExampleNumbers(id=str(i), passed=True, weighted_score=50.0) for i in range(60)]
    decision = decide_promotion(base, cand, judges={"j": (60, 60)}, baseline_judges={"j": (60, 60)})
    rule = next(r for r in decision.rules if r.rule == "judge_verdicts_readable")
    assert rule.outcome == "fail" and decision.outcome == "block"
    assert "baseline judge j 60/60" in rule.reason and "j 60/60" in rule.reason
    fine = decide_promotion(base, cand, judges={"j": (0, 60)}, baseline_judges={"j": (1, 60)})
    assert fine.outcome == "promote"


def _scored(value: float) -> list[dict[str, ScoreRecord]]:
    return [{"f1": ScoreRecord(value)} for _ in range(N)]


def test_a_different_answer_key_is_inconclusive(store: Store) -> None:
    base = _store_run(store, _scored(0.4), expected=[f"gold {i}" for i in range(N)])
    keys = [f"gold {i}" if i % 2 else f"other {i}" for i in range(N)]
    cand = _store_run(store, _scored(0.9), expected=keys)
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "comparable_runs")
    assert comparison.outcome == "inconclusive" and rule.outcome == "inconclusive"
    assert f"{N // 2} paired examples have a different expected answer" in rule.reason
    assert "(e0, e2, e4, e6, e8, …" in rule.reason
    assert rule.details["changed_expected"] == N // 2
    same = compare_runs(store, base, _store_run(store, _scored(0.9), expected=None))
    assert decision_rule(same, "comparable_runs").details["changed_expected"] == N


def _config(**options: str) -> dict[str, Any]:
    return {"scorers": [{"name": "f1", "options": options}, {"name": "exact_match", "options": {}}]}


def test_different_scorer_options_are_inconclusive(store: Store) -> None:
    base = _store_run(store, _scored(0.4), config=_config(case_sensitive="True"))
    cand = _store_run(store, _scored(0.9), config=_config())
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "comparable_runs")
    assert comparison.outcome == "inconclusive" and rule.outcome == "inconclusive"
    assert (
        "scorer f1 is configured differently: case_sensitive True in the baseline, unset in "
        "the candidate" in rule.reason
    )
    assert rule.details["scorer_changes"] == [
        "f1: case_sensitive True in the baseline, unset in the candidate"
    ]


def test_same_scorer_options_and_object_addresses_compare_equal(store: Store) -> None:
    base = _store_run(store, _scored(0.5), config=_config(fn="<function f at 0x7f00aa>"))
    cand = _store_run(store, _scored(0.5), config=_config(fn="<function f at 0x7f11bb>"))
    rule = decision_rule(compare_runs(store, base, cand), "comparable_runs")
    assert rule.passed, rule.reason


def test_the_header_says_how_many_pairs_were_scored_in_both(store: Store) -> None:
    from aieval.report import render_diff, render_html, render_markdown, render_text

    base = _store_run(store, _scored(1.0))
    failed = [{"f1": ScoreRecord(None, error="scorer raised")} for _ in range(N)]
    cand = _store_run(store, failed)
    comparison = compare_runs(store, base, cand)
    assert comparison.paired == N and comparison.scored_paired == 0
    assert comparison.to_dict()["scored_paired"] == 0
    rule = decision_rule(comparison, "paired_examples")
    assert "only 0 examples were scored in both runs" in rule.reason
    said = f"{N} examples paired by id, 0 scored in both"
    for render in (render_text, render_diff, render_markdown, render_html):
        assert said in " ".join(render(comparison).split()), render.__name__
