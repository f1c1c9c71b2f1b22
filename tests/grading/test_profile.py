import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval.errors import ConfigError, RubricError
from aieval.grading import (
    BUILTIN_PROFILES,
    REQUIRED_GATES,
    Profile,
    load_profile,
    load_rubric,
    normalize,
    profile_for_family,
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "rubrics" / "fullstack_generation_v1.yaml"

# Spec section 6: each family's own gates and default weights.
SECTION_6 = {
    "A": (
        [
            "patch_applies",
            "tests_fail_to_pass_all_green",
            "tests_pass_to_pass_threshold_met",
            "no_sandbox_violations",
        ],
        [0.60, 0.25, 0.10, 0.05],
    ),
    "B": (
        ["required_outputs_present", "no_critical_step_failures", "schema_contract_valid"],
        [0.35, 0.25, 0.20, 0.10, 0.10],
    ),
    "C": (
        [
            "answer_grounded_in_context",
            "citations_present_for_claims",
            "no_high_severity_hallucinations",
        ],
        [0.35, 0.25, 0.20, 0.10, 0.10],
    ),
    "D": (
        ["tool_call_schema_valid", "no_forbidden_tool_invoked", "handoff_graph_respected"],
        [0.25, 0.25, 0.20, 0.20, 0.10],
    ),
}


@pytest.mark.parametrize("pid", [pytest.param(p, id=p) for p in BUILTIN_PROFILES])
def test_builtin_profiles_match_sections_6_and_13(pid: str) -> None:
    profile = load_profile(pid)
    gates, weights = SECTION_6[pid]
    assert profile.id == pid and profile.gates == gates
    assert [c.weight for c in profile.criteria] == weights
    assert profile.gate_names[: len(REQUIRED_GATES)] == list(REQUIRED_GATES)
    # Section 13 defaults.
    assert profile.pass_threshold == 70
    assert profile.floors == {"correctness": 0.70, "safety": 0.80, "validation": 0.80}
    assert profile.swe == {"fail_to_pass": 1.0, "pass_to_pass": 0.95}
    assert profile.pairwise_inconsistency_warn == 0.10
    assert set(profile.slo) == {"latency_s", "cost_usd", "retries"}
    assert {c.kind for c in profile.criteria} <= {"objective", "judge", "efficiency"}
    assert any(c.category == "correctness" for c in profile.criteria)


def test_profile_b_uses_the_spec_slo_example() -> None:
    profile = load_profile("B")
    (eff,) = [c for c in profile.criteria if c.kind == "efficiency"]
    scores = profile.criterion_scores(
        {
            "correctness": 4,
            "completeness": 4,
            "tool_data_precision": 0.9,
            "documentation": 4,
            eff.name: 12.0,
        }
    )
    (score,) = [s for s in scores if s.name == eff.name]
    assert dict(score.params) == {"slo_good": 8, "slo_bad": 30}
    assert normalize(score.formula_id, 12.0, **score.params) == pytest.approx(18 / 22)


@pytest.mark.parametrize(
    ("family", "pid"),
    [
        pytest.param("swe", "A", id="swe"),
        pytest.param("code_repair", "A", id="code_repair"),
        pytest.param("Code-Repair", "A", id="spelling-variants"),
        pytest.param("dag", "B", id="dag"),
        pytest.param("rag", "C", id="rag"),
        pytest.param("agentic", "D", id="agentic"),
        pytest.param("tool_use", "D", id="tool_use"),
        pytest.param("c", "C", id="lower-case-id"),
    ],
)
def test_selection_by_family(family: str, pid: str) -> None:
    assert profile_for_family(family) == pid
    assert load_profile(family).id == pid


def test_unknown_family_lists_known() -> None:
    with pytest.raises(ConfigError, match="rag"):
        load_profile("astrology")


def all_gates(profile: Profile, **failed: bool) -> dict[str, bool]:
    return {**dict.fromkeys(profile.gate_names, True), **failed}


def b_scores(**changes: Any) -> dict[str, Any]:
    base = {
        "correctness": 5,
        "completeness": 5,
        "tool_data_precision": 1.0,
        "documentation": 5,
        "efficiency": 8,
    }
    return {**base, **changes}


def test_grade_through_profile_records_effective_profile() -> None:
    profile = load_profile("dag", overrides={"pass_threshold": 90, "weights": {"efficiency": 0}})
    g = profile.grade(
        hard_gates=all_gates(profile),
        scores=b_scores(correctness=4),
        calibrated=["correctness", "completeness", "documentation"],
    )
    assert g.pass_threshold == 90 and g.warnings == []
    assert g.profile is not None
    assert g.profile["id"] == "B" and g.profile["base"] == "B"
    assert g.profile["overrides"] == {"pass_threshold": 90, "weights": {"efficiency": 0}}
    assert json.loads(json.dumps(g.to_dict()))["profile"]["pass_threshold"] == 90


def test_profile_gates_are_required() -> None:
    profile = load_profile("A")
    gates = {k: v for k, v in all_gates(profile).items() if k != "patch_applies"}
    g = profile.grade(
        hard_gates=gates,
        scores={
            "objective_tests": 1.0,
            "judge_quality": 5,
            "patch_similarity": 1.0,
            "efficiency": 10,
        },
    )
    assert g.grade == "F" and [f.name for f in g.gate_failures] == ["patch_applies"]


def test_profile_category_floor_applies() -> None:
    profile = load_profile("B")
    g = profile.grade(hard_gates=all_gates(profile), scores=b_scores(correctness=3))
    assert [f.criterion for f in g.floor_failures] == ["correctness"]
    assert g.grade == "D" and not g.passed


def test_scores_must_match_criteria() -> None:
    scores = {k: v for k, v in b_scores().items() if k != "efficiency"}
    scores["speed"] = 1.0
    with pytest.raises(ConfigError, match="missing: efficiency; unknown: speed"):
        load_profile("B").grade(hard_gates={}, scores=scores)


def test_overrides() -> None:
    base = load_profile("B")
    p = base.with_overrides(
        weights={"correctness": 0.5},
        floors={"completeness": 0.6, "correctness": 0.75, "safety": None},
        extra_gates=["no_sandbox_violations"],
        slo={"latency_s": {"good": 1, "bad": 5}},
    )
    assert base.criterion_scores(b_scores())[0].weight == 0.35  # the original is unchanged
    crit = {c.name: c for c in p.criteria}
    assert crit["correctness"].weight == 0.5
    assert crit["completeness"].critical_floor == 0.6
    assert crit["correctness"].critical_floor == 0.75
    assert "safety" not in p.floors
    assert p.gate_names[-1] == "no_sandbox_violations"
    assert p.slo["latency_s"].good == 1
    again = p.with_overrides(pass_threshold=75)
    assert again.overrides["pass_threshold"] == 75 and "weights" in again.overrides


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        pytest.param({"weights": {"corectness": 0.5}}, "corectness", id="unknown-weight"),
        pytest.param({"floors": {"speed": 0.5}}, "speed", id="unknown-floor"),
        pytest.param({"pass_threshold": 150}, "pass_threshold", id="threshold-out"),
        pytest.param({"floors": {"correctness": 1.5}}, "critical_floor", id="floor-out"),
        pytest.param({"extra_gates": ["no_such_gate"]}, "no_such_gate", id="unknown-gate"),
        pytest.param({"threshold": 80}, "unknown profile override keys", id="unknown-key"),
        pytest.param(
            {"slo": {"latency_s": {"good": 5, "bad": 1}}}, "greater than good", id="slo-inverted"
        ),
    ],
)
def test_bad_overrides_name_the_problem(overrides: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        load_profile("B", overrides=overrides)


def test_with_rubric_replaces_criteria() -> None:
    rubric = load_rubric(EXAMPLE)
    p = load_profile("B").with_rubric(rubric)
    assert [c.name for c in p.criteria] == [c.name for c in rubric.criteria]
    assert p.rubric_id == "fullstack_generation_v1" and p.base == "B"
    assert p.criteria[0].critical_floor == rubric.criteria[0].critical_floor


def test_user_profile_file(tmp_path: Path) -> None:
    data = yaml.safe_load(
        Path(__file__).parents[2].joinpath("src/aieval/grading/profiles/C.yaml").read_text()
    )
    data["id"] = "support"
    path = tmp_path / "support.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_profile(path).id == "support"
    assert load_profile(str(path)).id == "support"
    data["criteria"][0]["wieght"] = 1
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RubricError) as info:
        load_profile(path)
    assert str(path) in str(info.value) and "'faithfulness'" in str(info.value)
    assert "'wieght'" in str(info.value)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        pytest.param({"gates": ["not_a_gate"]}, "unknown gates: not_a_gate", id="unknown-gate"),
        pytest.param(
            {"criteria": [{"name": "x", "weight": 1, "formula_id": "nope", "kind": "judge"}]},
            "nope",
            id="unknown-formula",
        ),
        pytest.param(
            {"criteria": [{"name": "x", "weight": 1, "formula_id": "zero_one", "kind": "vibes"}]},
            "'kind'",
            id="bad-kind",
        ),
        pytest.param(
            {
                "criteria": [
                    {
                        "name": "e",
                        "weight": 1,
                        "formula_id": "lower_is_better",
                        "kind": "efficiency",
                        "metric": "tokens",
                    }
                ]
            },
            "metric 'tokens'",
            id="metric-without-slo",
        ),
    ],
)
def test_invalid_profiles(change: dict[str, Any], fragment: str) -> None:
    data = {
        "id": "X",
        "name": "x",
        "criteria": [{"name": "q", "weight": 1, "formula_id": "zero_one", "kind": "judge"}],
        **change,
    }
    with pytest.raises(RubricError, match=fragment):
        load_profile(data)
