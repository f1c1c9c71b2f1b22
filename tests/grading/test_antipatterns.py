"""Section 14 of the scoring guide: each anti-pattern, and how the engine prevents it."""

from pathlib import Path

import pytest

from aieval.errors import RubricError
from aieval.grading import (
    BUILTIN_PROFILES,
    REQUIRED_GATES,
    CriterionScore,
    dataset_workflow_compatible,
    grade,
    load_profile,
)


def test_one_generic_score_for_every_workflow_type() -> None:
    # Each family gets its own gates and criteria; the profile used is recorded in the result.
    profiles = [load_profile(pid) for pid in BUILTIN_PROFILES]
    assert len({tuple(p.gates) for p in profiles}) == len(profiles)
    assert len({tuple(c.name for c in p.criteria) for p in profiles}) == len(profiles)
    rag = load_profile("rag")
    g = rag.grade(
        hard_gates=dict.fromkeys(rag.gate_names, True),
        scores={
            "faithfulness": 0.9,
            "response_relevance": 0.9,
            "context_precision": 0.8,
            "context_recall": 0.7,
            "efficiency": 3.0,
        },
    )
    assert g.profile is not None and g.profile["id"] == "C"


def test_weighted_score_cannot_override_a_failed_gate() -> None:
    perfect = [CriterionScore("correctness", 5, "likert_1_5"), CriterionScore("q", 1.0)]
    gates = {**dict.fromkeys(REQUIRED_GATES, True), "no_critical_step_failures": False}
    g = grade(hard_gates=gates, criteria=perfect, pass_threshold=0)
    assert g.weighted_score == 100.0
    assert g.grade == "F" and g.passed is False


def test_overlap_metrics_alone_are_refused() -> None:
    data = {
        "id": "bleu_only",
        "name": "BLEU only",
        "criteria": [
            {"name": "bleu", "weight": 0.5, "formula_id": "zero_one", "kind": "overlap"},
            {"name": "rouge_l", "weight": 0.5, "formula_id": "zero_one", "kind": "overlap"},
        ],
    }
    with pytest.raises(RubricError, match="not a sufficient quality signal"):
        load_profile(data)
    g = grade(
        hard_gates=dict.fromkeys(REQUIRED_GATES, True),
        criteria=[CriterionScore("rouge_l", 0.9, kind="overlap")],
    )
    assert any("overlap metrics" in w for w in g.warnings)


def test_uncalibrated_judge_outputs_are_flagged() -> None:
    g = grade(
        hard_gates=dict.fromkeys(REQUIRED_GATES, True),
        criteria=[CriterionScore("quality", 5, "likert_1_5", kind="judge")],
    )
    assert any("without a human calibration check" in w for w in g.warnings)


def test_order_bias_in_pairwise_judging_is_neutralised_and_flagged() -> None:
    # Swapped-order disagreements count as ties (they cannot be wins) and trip the 0.10 warning.
    raw = {"wins": 6, "losses": 0, "ties": 0, "inconsistent": 4}
    g = grade(
        hard_gates=dict.fromkeys(REQUIRED_GATES, True),
        criteria=[CriterionScore("preference", raw, "pairwise")],
    )
    assert g.criteria[0].norm == pytest.approx((6 + 0.5 * 4) / 10)
    assert any("position bias" in w for w in g.warnings)


def test_no_compatibility_guardrail_is_impossible() -> None:
    # Leaving the compatibility gate out fails it; an incompatible dataset fails it too.
    gates = {k: True for k in REQUIRED_GATES if k != "dataset_workflow_compatible"}
    g = grade(hard_gates=gates, criteria=[CriterionScore("q", 1.0)])
    assert g.grade == "F" and g.gate_failures[0].name == "dataset_workflow_compatible"
    check = dataset_workflow_compatible(required_inputs=["code_file"], available={"text": "x"})
    g = grade(
        hard_gates=[*[r for r in g.gate_results if r.passed], check],
        criteria=[CriterionScore("q", 1.0)],
    )
    assert not g.passed and "code_file" in g.reasons[0]


def test_profiles_ship_inside_the_package() -> None:
    import aieval.grading

    folder = Path(aieval.grading.__file__).parent / "profiles"
    assert sorted(p.stem for p in folder.glob("*.yaml")) == list(BUILTIN_PROFILES)
