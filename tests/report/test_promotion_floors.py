"""The 0.1 floor in the promotion policy: examples graded against a critical floor of 0.1 with
the mean of ten 0.1 scores meet it (the candidate promotes); a candidate truly below is blocked
by the floor rule. Rate tolerances are met exactly as well."""

from __future__ import annotations

from aieval.grading import REQUIRED_GATES, CriterionScore, grade
from aieval.report import (
    CriterionValue,
    ExampleNumbers,
    PromotionPolicy,
    RuleResult,
    decide_promotion,
)

TEN_TENTHS = sum([0.1] * 10) / 10  # 0.09999999999999999
N = 60


def _graded(i: int, value: float, failed_gate: bool = False) -> ExampleNumbers:
    """One example graded for real: a correctness criterion with a critical floor of 0.1."""
    g = grade(
        hard_gates={
            name: not (failed_gate and name == "schema_contract_valid") for name in REQUIRED_GATES
        },
        criteria=[CriterionScore("correctness", value, "zero_one", critical_floor=0.1)],
        pass_threshold=0,
    )
    (c,) = g.criteria
    return ExampleNumbers(
        id=f"ex{i}",
        passed=g.passed,
        weighted_score=g.weighted_score,
        grade=g.grade,
        gates={r.name: r.passed for r in g.gate_results},
        criteria={
            c.name: CriterionValue(
                normalized=c.norm,
                weight=c.weight,
                floor=c.critical_floor,
                floor_passed=not c.floor_failed,
            )
        },
        graded=True,
    )


def _rule(rules: list[RuleResult], name: str) -> RuleResult:
    return next(r for r in rules if r.rule == name)


def test_the_0_1_floor_is_met_by_the_mean_of_ten_0_1_scores() -> None:
    baseline = [_graded(i, 0.1) for i in range(N)]
    candidate = [_graded(i, TEN_TENTHS) for i in range(N)]
    assert all(c.criteria["correctness"].floor_passed for c in candidate)
    decision = decide_promotion(baseline, candidate)
    floor = _rule(decision.rules, "critical_floor_regression")
    assert floor.passed and floor.details["criteria"]["correctness"]["candidate"] == 0
    assert decision.outcome == "promote", decision.summary


def test_a_candidate_truly_below_the_0_1_floor_is_blocked_by_the_floor_rule() -> None:
    baseline = [_graded(i, 0.1) for i in range(N)]
    candidate = [_graded(i, 0.0999) for i in range(N)]
    decision = decide_promotion(baseline, candidate)
    floor = _rule(decision.rules, "critical_floor_regression")
    assert not floor.passed and floor.details["worse"] == ["correctness"]
    assert decision.outcome == "block"


def test_a_gate_failure_rate_at_the_tolerance_is_within_it() -> None:
    # 7% against 5%, a tolerance of 2 points: 0.07 - 0.05 is 0.020000000000000004 in floats
    baseline = [_graded(i, 0.5, failed_gate=i < 5) for i in range(100)]
    candidate = [_graded(i, 0.5, failed_gate=i < 7) for i in range(100)]
    policy = PromotionPolicy(gate_failure_tolerance=0.02)
    gate = _rule(decide_promotion(baseline, candidate, policy).rules, "hard_gate_failure_rate")
    assert gate.passed, gate.reason
    worse = [_graded(i, 0.5, failed_gate=i < 8) for i in range(100)]
    gate = _rule(decide_promotion(baseline, worse, policy).rules, "hard_gate_failure_rate")
    assert not gate.passed, gate.reason
