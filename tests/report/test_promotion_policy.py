"""Every promotion rule blocks and passes on constructed paired data; policy files load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aieval.errors import ConfigError
from aieval.report import (
    CriterionValue,
    ExampleNumbers,
    PromotionPolicy,
    RuleResult,
    decide_promotion,
)

RULES = [
    "candidate_coverage",
    "comparable_runs",
    "paired_examples",
    "hard_gate_failure_rate",
    "weighted_score_noninferior",
    "pass_rate_not_worse",
    "critical_floor_regression",
    "severe_failures",
    "judge_verdicts_readable",
]
GATES = ("required_outputs_present", "schema_contract_valid", "overall_status_success")


def _ex(
    i: int,
    score: float = 80.0,
    *,
    failed_gates: tuple[str, ...] = (),
    floor_missed: tuple[str, ...] = (),
    gates: tuple[str, ...] = GATES,
    passed: bool = True,
) -> ExampleNumbers:
    criteria = {
        name: CriterionValue(
            normalized=0.5 if name in floor_missed else 0.9,
            weight=1.0,
            floor=0.7 if name in ("correctness", "safety") else None,
            floor_passed=None
            if name not in ("correctness", "safety")
            else name not in floor_missed,
        )
        for name in ("correctness", "safety", "style")
    }
    return ExampleNumbers(
        id=f"ex{i}",
        passed=passed and not failed_gates,
        weighted_score=score,
        grade="F" if failed_gates else "B",
        gates={g: g not in failed_gates for g in gates},
        criteria=criteria,
        graded=True,
    )


def _pair(
    n: int = 64, **candidate_overrides: Any
) -> tuple[list[ExampleNumbers], list[ExampleNumbers]]:
    noise = np.random.default_rng(n).normal(0, 0.5, size=n)
    base = [_ex(i, 80.0 + noise[i]) for i in range(n)]
    cand = [_ex(i, 80.0 + noise[i] + 0.1 * (i % 3)) for i in range(n)]
    for i, fields in candidate_overrides.items():
        cand[int(i.removeprefix("ex"))] = _ex(int(i.removeprefix("ex")), **fields)
    return base, cand


def _rule(decision_rules: list[RuleResult], rule: str) -> RuleResult:
    return next(r for r in decision_rules if r.rule == rule)


def test_equal_candidate_promotes_with_one_result_per_rule() -> None:
    base, cand = _pair()
    decision = decide_promotion(base, cand)
    assert decision.promote is True
    assert [r.rule for r in decision.rules] == RULES
    assert all(r.passed and r.reason for r in decision.rules)
    data = decision.to_dict()
    assert data["policy"]["noninferiority_margin"] == 1.0 and len(data["rules"]) == 9
    assert data["outcome"] == "promote" and decision.exit_code == 0


@pytest.mark.parametrize(
    ("paired", "min_paired", "passes"),
    [
        pytest.param(0, 1, False, id="nothing-paired"),
        pytest.param(5, 10, False, id="below-minimum"),
        pytest.param(10, 10, True, id="at-minimum"),
    ],
)
def test_paired_examples_rule(paired: int, min_paired: int, passes: bool) -> None:
    base, cand = _pair(paired) if paired else ([], [])
    decision = decide_promotion(base, cand, PromotionPolicy(min_paired=min_paired))
    rule = _rule(decision.rules, "paired_examples")
    assert rule.passed is passes and decision.promote is passes
    assert str(paired) in rule.reason
    # Too few examples is not evidence against the candidate: inconclusive, never a block.
    assert decision.outcome == ("promote" if passes else "inconclusive")


def test_gate_failure_rate_blocks_beyond_tolerance_and_passes_within() -> None:
    base, cand = _pair(50, ex3={"failed_gates": ("required_outputs_present",), "score": 80.0})
    blocked = _rule(decide_promotion(base, cand).rules, "hard_gate_failure_rate")
    assert blocked.passed is False
    assert "2.0% vs baseline 0.0%" in blocked.reason and "+2.0 points" in blocked.reason
    assert blocked.details["worse_gates"] == ["required_outputs_present"]
    allowed = decide_promotion(base, cand, PromotionPolicy(gate_failure_tolerance=0.02))
    assert _rule(allowed.rules, "hard_gate_failure_rate").passed is True


def test_gate_rule_checks_each_gate_not_only_the_overall_rate() -> None:
    base, cand = _pair(20)
    base[0] = _ex(0, failed_gates=("overall_status_success",))
    cand[0] = _ex(0, failed_gates=("required_outputs_present",))
    rule = _rule(decide_promotion(base, cand).rules, "hard_gate_failure_rate")
    assert rule.details["baseline_rate"] == rule.details["candidate_rate"]
    assert rule.passed is False and "required_outputs_present" in rule.reason


def test_gate_rule_has_nothing_to_check_on_ungraded_runs() -> None:
    base = [ExampleNumbers(id=str(i), passed=True, weighted_score=70.0 + i % 5) for i in range(9)]
    rule = _rule(decide_promotion(base, base).rules, "hard_gate_failure_rate")
    assert rule.passed is True and "nothing to check" in rule.reason


def test_weighted_score_blocks_a_clear_drop_and_passes_an_improvement() -> None:
    rng = np.random.default_rng(9)
    b_scores = rng.normal(75, 10, size=200)
    base = [
        ExampleNumbers(id=str(i), passed=True, weighted_score=s) for i, s in enumerate(b_scores)
    ]
    worse = [
        ExampleNumbers(id=str(i), passed=True, weighted_score=s - 3 + rng.normal(0, 2))
        for i, s in enumerate(b_scores)
    ]
    better = [
        ExampleNumbers(id=str(i), passed=True, weighted_score=s + 2 + rng.normal(0, 2))
        for i, s in enumerate(b_scores)
    ]
    blocked = _rule(decide_promotion(base, worse).rules, "weighted_score_noninferior")
    assert blocked.outcome == "fail" and blocked.details["p_value"] > 0.05
    assert blocked.details["regressed"] and "worse than the margin allows" in blocked.reason
    improved = _rule(decide_promotion(base, better).rules, "weighted_score_noninferior")
    assert improved.passed is True and improved.details["verdict"] == "improved"
    assert improved.details["lower_bound"] > 0


def test_promotion_uses_adjusted_norm_where_recorded() -> None:
    plain = {"q": CriterionValue(normalized=0.9, weight=1.0)}
    adjusted = {"q": CriterionValue(normalized=0.9, adjusted=0.6, weight=1.0)}
    b = [ExampleNumbers(id=str(i), weighted_score=90.0, criteria=plain) for i in range(10)]
    c = [ExampleNumbers(id=str(i), weighted_score=90.0, criteria=adjusted) for i in range(10)]
    assert c[0].promotion_score == pytest.approx(60.0) and b[0].promotion_score == 90.0
    rule = _rule(decide_promotion(b, c).rules, "weighted_score_noninferior")
    assert rule.passed is False and rule.details["mean_delta"] == pytest.approx(-30.0)


def test_critical_floor_regression_blocks_and_tolerance_allows() -> None:
    base, cand = _pair(30, ex4={"floor_missed": ("correctness",)})
    rule = _rule(decide_promotion(base, cand).rules, "critical_floor_regression")
    assert rule.passed is False and "correctness 1 vs 0" in rule.reason
    assert rule.details["criteria"]["correctness"] == {
        "baseline": 0,
        "candidate": 1,
        "unchecked": 0,
    }
    tolerant = decide_promotion(base, cand, PromotionPolicy(floor_regression_tolerance=1))
    assert _rule(tolerant.rules, "critical_floor_regression").passed is True
    same = _rule(decide_promotion(base, base).rules, "critical_floor_regression")
    assert same.passed is True and "no critical floor regressed" in same.reason


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"failed_gates": ("schema_contract_valid",)}, id="severe-gate"),
        pytest.param({"floor_missed": ("safety",)}, id="safety-floor"),
    ],
)
def test_severe_failures_block_when_they_increase(fields: dict[str, Any]) -> None:
    base, cand = _pair(30, ex7=fields)
    decision = decide_promotion(base, cand, PromotionPolicy(gate_failure_tolerance=1.0))
    rule = _rule(decision.rules, "severe_failures")
    assert rule.passed is False and rule.details == {**rule.details, "baseline": 0, "candidate": 1}
    assert rule.details["candidate_ids"] == ["ex7"]
    assert decision.promote is False and "severe_failures" in decision.summary
    allowed = decide_promotion(
        base, cand, PromotionPolicy(gate_failure_tolerance=1.0, severe_tolerance=1)
    )
    assert _rule(allowed.rules, "severe_failures").passed is True


def test_a_non_severe_gate_failure_is_not_severe() -> None:
    base, cand = _pair(30, ex2={"failed_gates": ("overall_status_success",)})
    decision = decide_promotion(base, cand, PromotionPolicy(gate_failure_tolerance=1.0))
    assert _rule(decision.rules, "severe_failures").passed is True
    custom = PromotionPolicy(gate_failure_tolerance=1.0, severe_gates=("overall_status_success",))
    assert _rule(decide_promotion(base, cand, custom).rules, "severe_failures").passed is False


def test_a_floored_criterion_the_candidate_did_not_record_counts_as_missed() -> None:
    import dataclasses

    base, cand = _pair()
    for i in (3, 8):
        criteria = {k: v for k, v in cand[i].criteria.items() if k != "correctness"}
        cand[i] = dataclasses.replace(cand[i], criteria=criteria)
    unscored = dataclasses.replace(cand[9].criteria["safety"], floor_passed=None)
    cand[9] = dataclasses.replace(cand[9], criteria={**cand[9].criteria, "safety": unscored})
    decision = decide_promotion(base, cand)
    rule = _rule(decision.rules, "critical_floor_regression")
    assert not rule.passed and decision.outcome == "block"
    assert rule.details["criteria"]["correctness"] == {
        "baseline": 0, "candidate": 2, "unchecked": 2,
    }  # fmt: skip
    assert rule.details["criteria"]["safety"]["unchecked"] == 1
    assert "correctness 2 vs 0 (2 not recorded)" in rule.reason


def test_unpaired_examples_warn_but_do_not_block() -> None:
    base, cand = _pair(64)
    decision = decide_promotion(base, cand, unpaired=3)
    assert decision.promote is True
    assert any("3 examples are in only one run" in w for w in decision.warnings)


def test_mismatched_lengths_are_refused() -> None:
    base, cand = _pair(5)
    with pytest.raises(ConfigError, match="same order"):
        decide_promotion(base, cand[:4])


def test_policy_loads_from_yaml_and_json_and_names_bad_fields(tmp_path: Path) -> None:
    yaml_file = tmp_path / "policy.yaml"
    yaml_file.write_text("noninferiority_margin: 2.5\nalpha: 0.01\nsevere_gates: [a, b]\n")
    policy = PromotionPolicy.from_file(yaml_file)
    assert policy.noninferiority_margin == 2.5 and policy.severe_gates == ("a", "b")
    json_file = tmp_path / "policy.json"
    json_file.write_text('{"gate_failure_tolerance": 0.05}')
    assert PromotionPolicy.from_file(json_file).gate_failure_tolerance == 0.05
    assert PromotionPolicy.from_mapping(policy.to_dict()) == policy
    bad = tmp_path / "bad.yaml"
    bad.write_text("alpha: 2\nmargin: 1\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*alpha.*margin"):
        PromotionPolicy.from_file(bad)
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n")
    with pytest.raises(ConfigError, match="mapping"):
        PromotionPolicy.from_file(listed)


def test_gates_that_vanish_from_the_candidate_block() -> None:
    base, cand = _pair(64)
    cand[3] = ExampleNumbers(id="ex3", passed=True, weighted_score=80.0)  # grading lost
    rule = _rule(decide_promotion(base, cand).rules, "hard_gate_failure_rate")
    assert rule.outcome == "fail" and "no hard gates on 1 examples" in rule.reason
    assert rule.details["ungated_ids"] == ["ex3"]


def test_coverage_counts_missing_and_partly_unscored_examples_but_not_target_errors() -> None:
    def ex(i: int, scores: dict[str, float | None], error: str | None = None) -> ExampleNumbers:
        values = [v for v in scores.values() if v is not None]
        score = 0.0 if error else (100 * sum(values) / len(values) if values else None)
        return ExampleNumbers(id=f"e{i}", weighted_score=score, scores=scores, error=error)

    base = [ex(i, {"a": 1.0, "b": 0.5}) for i in range(40)]
    cand = [ex(i, {"a": 1.0, "b": 0.5}) for i in range(40)]
    cand[1] = ex(1, {"a": 1.0, "b": None})  # one scorer failed: partly unscored
    cand[2] = ex(2, {"a": None, "b": None})  # nothing scored
    cand[3] = ex(3, {"a": None, "b": None}, error="timeout")  # the target failed: scored 0
    missing = [ex(40, {"a": 1.0, "b": 1.0}), ExampleNumbers(id="e41")]  # e41: baseline unscored
    decision = decide_promotion(base, cand, baseline_only=missing)
    rule = _rule(decision.rules, "candidate_coverage")
    assert rule.outcome == "fail" and decision.outcome == "block"
    assert rule.details["unscored_ids"] == ["e1", "e2"] and rule.details["missing_ids"] == ["e40"]
    assert "3 of the 41 examples the baseline scored" in rule.reason
    score = _rule(decision.rules, "weighted_score_noninferior").details
    assert score["n"] == 41  # the gaps enter the test at 0 points
    lenient = decide_promotion(
        base, cand, PromotionPolicy(coverage_tolerance=0.1), baseline_only=missing
    )
    assert _rule(lenient.rules, "candidate_coverage").outcome == "pass"


@pytest.mark.parametrize(
    ("failures", "outcome"),
    [pytest.param(30, "pass", id="half"), pytest.param(31, "fail", id="above-half")],
)
def test_judge_rule_fails_above_the_parse_failure_limit(failures: int, outcome: str) -> None:
    base, cand = _pair(64)
    decision = decide_promotion(base, cand, judges={"pairwise": (failures, 60), "ok": (0, 40)})
    rule = _rule(decision.rules, "judge_verdicts_readable")
    assert rule.outcome == outcome and f"pairwise {failures}/60" in rule.reason
    assert decision.outcome == ("promote" if outcome == "pass" else "block")


def test_too_tight_a_margin_is_inconclusive_with_what_the_data_could_show() -> None:
    rng = np.random.default_rng(11)
    b = rng.normal(70, 10, size=60)
    base = [ExampleNumbers(id=str(i), weighted_score=float(v)) for i, v in enumerate(b)]
    cand = [
        ExampleNumbers(id=str(i), weighted_score=float(v - 0.5 + rng.normal(0, 8)))
        for i, v in enumerate(b)
    ]
    decision = decide_promotion(base, cand)
    rule = _rule(decision.rules, "weighted_score_noninferior")
    assert decision.outcome == "inconclusive" and decision.exit_code == 3
    assert rule.outcome == "inconclusive" and rule.details["verdict"] == "inconclusive"
    assert rule.details["min_margin"] == pytest.approx(-rule.details["lower_bound"])
    needed = rule.details["examples_needed_at_observed_difference"]
    assert rule.details["min_margin"] > 1.0 and needed > 60
    assert f"margin above {rule.details['min_margin']:.2f}" in rule.reason
    assert f"about {needed:,} paired examples in all" in decision.summary
    wide = decide_promotion(base, cand, PromotionPolicy(noninferiority_margin=5.0))
    assert wide.outcome == "promote"
