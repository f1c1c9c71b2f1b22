"""The 0.1 floor: floors, the pass threshold and gate thresholds are met exactly, float rounding
aside, and a value truly below them still fails (spec 5.1: ``norm_i < critical_floor_i``,
``weighted_100 >= pass_threshold``)."""

from __future__ import annotations

from aieval.grading import CriterionScore, GradeResult, grade
from aieval.grading import tests_fail_to_pass_all_green as f2p_gate
from aieval.grading import tests_pass_to_pass_threshold_met as p2p_gate

TEN_TENTHS = sum([0.1] * 10) / 10  # the mean of ten scores of 0.1: 0.09999999999999999


def _grade(raw: float, *, floor: float | None = None, threshold: float = 70.0) -> GradeResult:
    return grade(
        hard_gates={},
        required_gates=(),
        default_floors=None,
        criteria=[CriterionScore("correctness", raw, "zero_one", critical_floor=floor)],
        pass_threshold=threshold,
    )


def test_the_0_1_floor_is_met_by_the_mean_of_ten_0_1_scores() -> None:
    assert TEN_TENTHS < 0.1
    g = _grade(TEN_TENTHS, floor=0.1, threshold=10)
    assert g.floor_failures == [] and not g.floors[0].failed
    assert g.passed and g.weighted_score == 10.0
    assert "correctness 0.100 clears its floor 0.10" in "\n".join(g.placement)


def test_a_score_truly_below_the_floor_still_fails_and_says_by_how_much() -> None:
    g = _grade(0.0999, floor=0.1, threshold=0)
    assert not g.passed and g.reason == "floor_failure"
    assert g.reasons == ["critical floor missed: correctness 0.0999 < 0.1000"]
    placement = "\n".join(g.placement)
    assert "correctness 0.0999 misses its floor 0.1000 by 1.0e-04" in placement


def test_a_weighted_score_equal_to_the_threshold_meets_it() -> None:
    # 70.70 is exact after spec 5.1's rounding; the float 70.7 is a little above 70.70
    g = _grade(0.707, threshold=70.7)
    assert g.weighted_score == 70.7 and g.passed
    below = _grade(0.7069, threshold=70.7)
    assert below.weighted_score == 70.69 and not below.passed
    assert below.reasons == ["weighted score 70.69 is below the pass threshold 70.7"]


def test_spec_boundaries_stay_exact() -> None:
    assert _grade(0.70, floor=0.70).passed
    assert not _grade(0.6999, floor=0.70).passed
    assert not _grade(0.6999).passed  # weighted 69.99 < 70


def test_gate_thresholds_are_met_exactly() -> None:
    computed = 0.1 * 3  # 0.30000000000000004: a threshold computed rather than written
    assert p2p_gate(passed=3, total=10, threshold=computed).passed
    assert not p2p_gate(passed=2, total=10, threshold=computed).passed
    assert f2p_gate(passed=3, total=10, threshold=computed).passed
    assert not p2p_gate(passed=94, total=100).passed  # 0.94 < 0.95
