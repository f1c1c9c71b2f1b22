import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.errors import ConfigError, FormulaError
from aieval.grading import (
    DEFAULT_FLOORS,
    REQUIRED_GATES,
    CriterionScore,
    GateResult,
    adjusted_norm,
    band,
    grade,
    normalize,
)

ORDER = "ABCDF"
ALL_PASS = {name: True for name in REQUIRED_GATES}


def c(name: str, raw: Any, formula_id: str = "zero_one", **kw: Any) -> CriterionScore:
    return CriterionScore(name=name, raw_score=raw, formula_id=formula_id, **kw)


def weighted_100(pairs: list[tuple[float, float]]) -> float:
    """The spec's STEP 3 with plain floats, as an independent oracle."""
    total = sum(w for w, _ in pairs)
    return round(sum(w * n for w, n in pairs) / total * 100, 2)


# -- worked example and the algorithm's branches --------------------------------------------------


def test_design_example() -> None:
    criteria = [
        c("correctness", 4, "likert_1_5", weight=0.35, critical_floor=0.70),
        c("completeness", 3, "likert_1_5", weight=0.25),
        c(
            "efficiency",
            12.0,
            "lower_is_better",
            weight=0.40,
            params={"slo_good": 8, "slo_bad": 30},
        ),
    ]
    g = grade(hard_gates=ALL_PASS, criteria=criteria, pass_threshold=70)
    want = weighted_100([(0.35, 0.75), (0.25, 0.5), (0.40, (30 - 12) / (30 - 8))])
    assert g.weighted_score == want
    assert g.grade == band(want)
    assert g.passed is (want >= 70)
    assert g.floor_failures == [] and g.gate_failures == []
    assert [r.norm for r in g.criteria][:2] == [0.75, 0.5]


@pytest.mark.parametrize(
    ("score", "letter"),
    [
        pytest.param(100, "A", id="100"),
        pytest.param(90, "A", id="90"),
        pytest.param(89.99, "B", id="89.99"),
        pytest.param(80, "B", id="80"),
        pytest.param(79.99, "C", id="79.99"),
        pytest.param(70, "C", id="70"),
        pytest.param(69.99, "D", id="69.99"),
        pytest.param(60, "D", id="60"),
        pytest.param(59.99, "F", id="59.99"),
        pytest.param(0, "F", id="0"),
    ],
)
def test_band_boundaries(score: float, letter: str) -> None:
    assert band(score) == letter
    g = grade(hard_gates=ALL_PASS, criteria=[c("quality", score / 100)], default_floors=None)
    assert g.weighted_score == score
    assert g.grade == letter and g.band == letter
    assert g.passed is (score >= 70)


def test_step1_gate_failure_forces_f_and_keeps_score() -> None:
    gates = {
        **ALL_PASS,
        "schema_contract_valid": GateResult(
            "schema_contract_valid", False, "schema violation at $.review: missing"
        ),
    }
    g = grade(hard_gates=gates, criteria=[c("correctness", 5, "likert_1_5")])
    assert g.grade == "F" and not g.passed
    assert g.reason == "hard_gate_failure"
    assert g.weighted_score == 100.0 and g.band == "A"
    assert [f.name for f in g.gate_failures] == ["schema_contract_valid"]
    assert any("$.review" in r for r in g.reasons)
    assert any("hard gate failure" in line for line in g.placement)


def test_gates_as_list_of_results() -> None:
    gates = [GateResult(n, True) for n in REQUIRED_GATES]
    gates.append(GateResult("patch_applies", False, "hunk 2 failed"))
    g = grade(hard_gates=gates, criteria=[c("q", 0.95)])
    assert g.grade == "F" and g.gate_failures[0].reason == "hunk 2 failed"


def test_step5_floor_caps_grade_at_d() -> None:
    criteria = [
        c("correctness", 2, "likert_1_5", weight=0.1, critical_floor=0.70),
        c("style", 1.0, weight=0.9),
    ]
    g = grade(hard_gates=ALL_PASS, criteria=criteria)
    assert g.weighted_score == weighted_100([(0.1, 0.25), (0.9, 1.0)])
    assert g.band == "A" and g.grade == "D"
    assert not g.passed and g.reason == "floor_failure"
    (floor,) = g.floor_failures
    assert floor.criterion == "correctness" and floor.margin == pytest.approx(0.25 - 0.70)
    assert any("capped at D" in line for line in g.placement)


def test_floor_cap_never_raises_an_f() -> None:
    criteria = [c("correctness", 0.1, critical_floor=0.7), c("other", 0.2)]
    g = grade(hard_gates=ALL_PASS, criteria=criteria)
    assert g.grade == "F" and g.band == "F"


def test_step6_below_threshold_fails_without_floor_failure() -> None:
    g = grade(hard_gates=ALL_PASS, criteria=[c("quality", 0.65)], pass_threshold=70)
    assert g.grade == "D" and not g.passed and g.reason == "below_threshold"
    assert any("below the pass threshold 70" in r for r in g.reasons)


def test_custom_threshold() -> None:
    g = grade(hard_gates=ALL_PASS, criteria=[c("quality", 0.82)], pass_threshold=85)
    assert g.grade == "B" and not g.passed
    assert grade(hard_gates=ALL_PASS, criteria=[c("quality", 0.82)], pass_threshold=80).passed


def test_rounding_to_two_decimals() -> None:
    g = grade(hard_gates=ALL_PASS, criteria=[c("a", 1 / 3), c("b", 1 / 3)])
    assert g.weighted_score == round((1 / 3) * 100, 2)
    assert g.weighted_0_1 == pytest.approx(1 / 3)


def test_floor_at_exact_boundary_passes() -> None:
    # (3.8 - 1) / 4 is 0.7 up to float error; it must clear a 0.70 floor.
    g = grade(hard_gates=ALL_PASS, criteria=[c("correctness", 3.8, "likert_1_5")])
    assert g.floor_failures == [] and g.floors[0].floor == DEFAULT_FLOORS["correctness"]


def test_default_floors_by_name_and_category() -> None:
    criteria = [c("correctness", 0.69), c("guardrails", 0.79, category="safety"), c("x", 1.0)]
    g = grade(hard_gates=ALL_PASS, criteria=criteria)
    assert [f.criterion for f in g.floor_failures] == ["correctness", "guardrails"]
    assert {f.source for f in g.floors} == {"default"}
    assert g.grade == "D"
    pure = grade(hard_gates=ALL_PASS, criteria=criteria, default_floors=None)
    assert pure.floors == [] and pure.grade == band(pure.weighted_score)


def test_explicit_floor_wins_over_default() -> None:
    g = grade(hard_gates=ALL_PASS, criteria=[c("correctness", 0.6, critical_floor=0.5)])
    assert g.floors[0].floor == 0.5 and g.floors[0].source == "criterion"
    assert not g.floor_failures


def test_missing_required_gate_fails() -> None:
    gates = {k: v for k, v in ALL_PASS.items() if k != "dataset_workflow_compatible"}
    g = grade(hard_gates=gates, criteria=[c("q", 1.0)])
    assert g.grade == "F"
    assert g.gate_failures[0].name == "dataset_workflow_compatible"
    assert "not evaluated" in g.gate_failures[0].reason
    assert grade(hard_gates={}, criteria=[c("q", 1.0)], required_gates=()).passed


def test_placement_explains_a_with_thin_floor_margin() -> None:
    criteria = [c("correctness", 0.75, weight=0.1), c("q", 1.0, weight=0.9)]
    g = grade(hard_gates=ALL_PASS, criteria=criteria)
    assert g.grade == "A"
    assert any("A expects floors cleared by >= 0.10" in line for line in g.placement)
    assert any("correctness 0.750 clears its floor 0.70 by 0.050" in line for line in g.placement)


def test_use_adjusted_grades_on_adjusted_norm() -> None:
    crit = [c("q", 1.0, n=5)]
    plain = grade(hard_gates=ALL_PASS, criteria=crit)
    adjusted = grade(hard_gates=ALL_PASS, criteria=crit, use_adjusted=True)
    assert plain.criteria[0].adjusted_norm == adjusted_norm(1.0, 5)
    assert plain.weighted_score == 100.0
    assert adjusted.weighted_score == round(adjusted_norm(1.0, 5) * 100, 2)


def test_result_is_plain_json() -> None:
    g = grade(
        hard_gates=ALL_PASS,
        criteria=[c("p", {"wins": 3, "losses": 1}, "pairwise")],
        profile={"id": "B"},
    )
    data = json.loads(json.dumps(g.to_dict()))
    assert data["grade"] == g.grade and data["profile"] == {"id": "B"}
    assert data["gate_results"][0]["name"] == REQUIRED_GATES[0]
    assert data["criteria"][0]["raw_score"] == {"wins": 3, "losses": 1}


def test_warnings_for_uncalibrated_judges_and_position_bias() -> None:
    criteria = [
        c("judge", 4, "likert_1_5", kind="judge"),
        c("calibrated_judge", 4, "likert_1_5", kind="judge", calibrated=True),
        c("pair", {"wins": 5, "losses": 2, "ties": 1, "inconsistent": 2}, "pairwise"),
        c("pair_ok", {"wins": 8, "losses": 1, "ties": 0, "inconsistent": 1}, "pairwise"),
    ]
    g = grade(hard_gates=ALL_PASS, criteria=criteria)
    assert len(g.warnings) == 2
    assert "'judge'" in g.warnings[0]
    assert "'pair'" in g.warnings[1] and "0.20" in g.warnings[1]
    assert g.passed  # warnings never change the verdict


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        pytest.param({"criteria": []}, "at least one criterion", id="no-criteria"),
        pytest.param({"criteria": [c("a", 1.0), c("a", 0.5)]}, "duplicate", id="duplicate"),
        pytest.param({"criteria": [c("a", 1.0, weight=-1)]}, "weight", id="negative-weight"),
        pytest.param({"criteria": [c("a", 1.0, weight=float("nan"))]}, "weight", id="nan-weight"),
        pytest.param({"criteria": [c("a", 1.0, weight=0)]}, "sum to 0", id="zero-weights"),
        pytest.param({"criteria": [c("a", 1.0, critical_floor=3)]}, "0..1", id="raw-floor"),
        pytest.param({"criteria": [c("a", 1.0)], "pass_threshold": 0.7}, None, id="ok-low-mark"),
        pytest.param(
            {"criteria": [c("a", 1.0)], "pass_threshold": 170}, "0..100", id="threshold-out"
        ),
        pytest.param(
            {"criteria": [c("a", 1.0)], "hard_gates": {"x": "yes"}},
            "True/False",
            id="gate-not-bool",
        ),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], fragment: str | None) -> None:
    call = {"hard_gates": ALL_PASS, **kwargs}
    if fragment is None:
        assert grade(**call).passed
        return
    with pytest.raises(ConfigError, match=fragment):
        grade(**call)


def test_bad_raw_score_raises_formula_error() -> None:
    with pytest.raises(FormulaError, match="likert_1_5"):
        grade(hard_gates=ALL_PASS, criteria=[c("a", 9, "likert_1_5")])


# -- properties -----------------------------------------------------------------------------------

likert = st.floats(min_value=1, max_value=5)
floors = st.one_of(st.none(), st.floats(min_value=0, max_value=1))


@st.composite
def criteria_lists(draw: st.DrawFn) -> list[CriterionScore]:
    n = draw(st.integers(min_value=1, max_value=5))
    weights = draw(st.lists(st.integers(min_value=0, max_value=20), min_size=n, max_size=n))
    if sum(weights) == 0:
        weights[0] = 1
    return [
        c(f"c{i}", draw(likert), "likert_1_5", weight=float(w), critical_floor=draw(floors))
        for i, w in enumerate(weights)
    ]


gate_maps = st.dictionaries(st.sampled_from(REQUIRED_GATES), st.booleans(), min_size=5)


@given(criteria=criteria_lists(), gates=gate_maps)
def test_failed_gate_always_f(criteria: list[CriterionScore], gates: dict[str, bool]) -> None:
    g = grade(hard_gates=gates, criteria=criteria)
    if not all(gates.values()):
        assert g.grade == "F" and g.passed is False and g.reason == "hard_gate_failure"
    assert 0.0 <= g.weighted_score <= 100.0
    assert g.band == band(g.weighted_score)


@given(criteria=criteria_lists(), data=st.data())
def test_grade_never_improves_when_a_score_drops(
    criteria: list[CriterionScore], data: st.DataObject
) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(criteria) - 1))
    lower = data.draw(st.floats(min_value=1, max_value=criteria[i].raw_score))
    dropped = [*criteria]
    dropped[i] = dataclasses.replace(criteria[i], raw_score=lower)
    before = grade(hard_gates=ALL_PASS, criteria=criteria)
    after = grade(hard_gates=ALL_PASS, criteria=dropped)
    assert ORDER.index(after.grade) >= ORDER.index(before.grade)
    assert after.weighted_score <= before.weighted_score
    assert not (after.passed and not before.passed)


@given(criteria=criteria_lists(), factor=st.integers(min_value=1, max_value=10_000))
def test_weights_are_scale_invariant(criteria: list[CriterionScore], factor: int) -> None:
    scaled = [dataclasses.replace(x, weight=x.weight * factor) for x in criteria]
    a = grade(hard_gates=ALL_PASS, criteria=criteria)
    b = grade(hard_gates=ALL_PASS, criteria=scaled)
    assert (a.weighted_score, a.grade, a.passed) == (b.weighted_score, b.grade, b.passed)


@given(criteria=criteria_lists(), exponent=st.integers(min_value=-20, max_value=20))
def test_fractional_weights_scale_invariant(criteria: list[CriterionScore], exponent: int) -> None:
    scaled = [dataclasses.replace(x, weight=x.weight * 0.37 * 2.0**exponent) for x in criteria]
    base = [dataclasses.replace(x, weight=x.weight * 0.37) for x in criteria]
    a = grade(hard_gates=ALL_PASS, criteria=base)
    b = grade(hard_gates=ALL_PASS, criteria=scaled)
    assert (a.weighted_score, a.grade, a.passed) == (b.weighted_score, b.grade, b.passed)


@given(criteria=criteria_lists())
def test_weighted_score_matches_float_oracle(criteria: list[CriterionScore]) -> None:
    g = grade(hard_gates=ALL_PASS, criteria=criteria)
    pairs = [(x.weight, normalize("likert_1_5", x.raw_score)) for x in criteria]
    assert g.weighted_score == pytest.approx(weighted_100(pairs), abs=0.01)
    floor_failed = any(r.floor_failed for r in g.criteria)
    assert g.passed is (g.weighted_score >= 70 and not floor_failed)
    if floor_failed:
        assert g.grade in "DF"
