"""A comparison only promotes runs that evaluated the same examples the same way: scorer sets,
inputs, grading mode and pass rates are checked, never assumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.reports import decision_rule, store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.errors import ConfigError
from aieval.report import PromotionPolicy, compare_runs
from aieval.store import Store

N = 80


def _store_run(
    store: Store,
    scores: dict[str, list[float]],
    *,
    inputs: list[Any] | None = None,
    passed: list[bool] | None = None,
    extra: list[dict[str, Any]] | None = None,
) -> str:
    return store_run(store, [
        SampleRecord(
            id=f"e{i}", index=i, input=inputs[i] if inputs else f"question {i}",
            passed=passed[i] if passed else True,
            scores={name: ScoreRecord(values[i]) for name, values in scores.items()},
            extra=extra[i] if extra else {},
        )
        for i in range(N)
    ])  # fmt: skip


def test_a_scorer_the_candidate_dropped_blocks_by_coverage(store: Store) -> None:
    base = _store_run(store, {"exact_match": [0.8] * N, "token_f1": [0.5] * N})
    cand = _store_run(store, {"token_f1": [0.5] * N})
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "candidate_coverage")
    assert comparison.outcome == "block" and not rule.passed
    assert f"{N} not scored by the candidate" in rule.reason


def test_scorers_only_the_candidate_has_leave_its_weighted_score(store: Store) -> None:
    base = _store_run(store, {"exact_match": [0.8] * N})
    easy = {f"always_{k}": [1.0] * N for k in range(4)}
    cand = _store_run(store, {"exact_match": [0.5] * N, **easy})
    comparison = compare_runs(store, base, cand)
    score = decision_rule(comparison, "weighted_score_noninferior")
    assert score.details["mean_delta"] == pytest.approx(-30.0)
    assert comparison.outcome == "block"
    assert any("adds scorers the baseline lacks" in w and "always_0" in w
               for w in comparison.warnings)  # fmt: skip


def test_different_inputs_paired_by_id_are_inconclusive(store: Store) -> None:
    base = _store_run(store, {"exact_match": [0.8] * N})
    cand = _store_run(store, {"exact_match": [0.8] * N}, inputs=[f"other {i}" for i in range(N)])
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "comparable_runs")
    assert comparison.outcome == "inconclusive" and rule.outcome == "inconclusive"
    assert f"{N} paired examples have a different input" in rule.reason
    assert rule.details["changed_input_ids"][:2] == ["e0", "e1"]


def test_graded_against_ungraded_is_inconclusive(store: Store) -> None:
    base = _store_run(store, {"quality": [0.8] * N})
    evaluation = {"weighted_score": 80.0, "grade": "B", "passed": True,
                  "hard_gates": {"overall_status_success": False}, "criteria": []}  # fmt: skip
    cand = _store_run(store, {"quality": [0.8] * N}, extra=[{"evaluation": evaluation}] * N)
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "comparable_runs")
    assert comparison.outcome == "inconclusive" and rule.details["grading_differs"] == N
    assert "graded in one run and not the other" in rule.reason


def test_a_pass_rate_shown_to_fall_blocks(store: Store) -> None:
    base = _store_run(store, {"exact_match": [0.9] * N})
    cand = _store_run(store, {"exact_match": [0.9] * N}, passed=[i % 2 == 0 for i in range(N)])
    comparison = compare_runs(store, base, cand)
    rule = decision_rule(comparison, "pass_rate_not_worse")
    assert comparison.outcome == "block" and rule.outcome == "fail"
    assert rule.details["lost"] == N // 2 and "worse than the margin, shown" in rule.reason
    assert decision_rule(comparison, "weighted_score_noninferior").passed


def test_equal_runs_pass_every_comparability_rule(store: Store) -> None:
    base = _store_run(store, {"exact_match": [0.8] * N})
    cand = _store_run(store, {"exact_match": [0.8] * N})
    comparison = compare_runs(store, base, cand)
    for name in ("comparable_runs", "pass_rate_not_worse", "candidate_coverage"):
        assert decision_rule(comparison, name).passed, name
    with pytest.raises(ConfigError, match="same run"):
        compare_runs(store, base, base)


def test_identical_runs_at_a_zero_margin_are_inconclusive_not_blocked(store: Store) -> None:
    base = _store_run(store, {"exact_match": [0.8] * N})
    cand = _store_run(store, {"exact_match": [0.8] * N})
    comparison = compare_runs(store, base, cand, policy=PromotionPolicy(noninferiority_margin=0))
    assert comparison.outcome == "inconclusive", comparison.decision.summary


@pytest.mark.parametrize(
    ("text", "field"),
    [("seed: -1\n", "seed"), ("noninferiority_margin: .inf\n", "noninferiority_margin")],
)
def test_policy_values_numpy_would_choke_on_are_refused_by_field(
    tmp_path: Path, text: str, field: str
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"policy.yaml: invalid promotion policy: {field}"):
        PromotionPolicy.from_file(path)
