"""evaluate_run: each required gate passing and failing with its reason, grading, payload."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.workflows import DEFINITION, SCORES, make_run, make_step

from aieval.grading import REQUIRED_GATES, normalize
from aieval.workflows import evaluate_run, load_workflow


def _gate(run: dict[str, Any], name: str, sample: dict[str, Any] | None = None) -> Any:
    ev = evaluate_run(run, workflow=DEFINITION, sample=sample)
    return next(g for g in ev.gate_results if g.name == name), ev


def test_clean_run_passes_every_required_gate() -> None:
    ev = evaluate_run(make_run(), workflow=DEFINITION, sample={"code_file": "a.py"})
    assert all(ev.hard_gates[name] for name in REQUIRED_GATES)
    assert ev.gate_failures == [] and ev.passed and ev.grade == "A"


@pytest.mark.parametrize(
    ("run", "gate", "needle"),
    [
        pytest.param(
            make_run(final_output={}),
            "required_outputs_present",
            "missing: report",
            id="output-missing",
        ),
        pytest.param(
            make_run(final_output={"report": None}),
            "required_outputs_present",
            "present but None: report",
            id="output-none",
        ),
        pytest.param(
            make_run(steps=[make_step("parse"), make_step("review", "skipped")]),
            "required_outputs_present",
            "unresolved: report",
            id="output-unresolved-step",
        ),
        pytest.param(
            make_run(metadata={"unresolved_outputs": ["report"], "scores": SCORES}),
            "required_outputs_present",
            "unresolved: report",
            id="output-unresolved-recorded",
        ),
        pytest.param(
            make_run(overall_status="partial"),
            "overall_status_success",
            "overall status is 'partial'",
            id="status",
        ),
        pytest.param(
            make_run(steps=[make_step("review", "failed")]),
            "no_critical_step_failures",
            "review (failed)",
            id="critical-step",
        ),
        pytest.param(
            make_run(final_output={"report": {"issues": [1, "x"]}}),
            "schema_contract_valid",
            "$.report.issues[1]",
            id="schema",
        ),
    ],
)
def test_gate_fails_with_reason(run: dict[str, Any], gate: str, needle: str) -> None:
    result, ev = _gate(run, gate, {"code_file": "a.py"})
    assert not result.passed and needle in result.reason
    assert not ev.passed and ev.grade == "F"
    assert any(g.name == gate for g in ev.gate_failures)


def test_non_critical_step_failure_passes() -> None:
    run = make_run(steps=[make_step("parse"), make_step("lint", "failed"), make_step("review")])
    result, ev = _gate(run, "no_critical_step_failures", {"code_file": "a.py"})
    assert result.passed and ev.passed


def test_incompatible_sample_lists_missing_inputs() -> None:
    run = make_run(metadata={"scores": SCORES})
    result, ev = _gate(run, "dataset_workflow_compatible", {"language": "go"})
    assert not result.passed and result.evidence["missing_inputs"] == ["code_file"]
    assert "code_file" in result.reason and not ev.passed


def test_enum_violation_is_incompatible() -> None:
    result, _ = _gate(
        make_run(), "dataset_workflow_compatible", {"code_file": "a", "language": "c"}
    )
    assert not result.passed and "language='c'" in result.reason


def test_missing_criteria_block_passing_unless_allowed() -> None:
    scores = {k: v for k, v in SCORES.items() if k != "documentation"}
    run = make_run(metadata={"scores": scores, "inputs": {"code_file": "a"}})
    strict = evaluate_run(run, workflow=DEFINITION)
    assert not strict.passed and strict.reason == "missing_criteria"
    assert [m["name"] for m in strict.missing_criteria] == ["documentation"]
    assert any("documentation" in r for r in strict.reasons)
    lenient = evaluate_run(run, workflow=DEFINITION, allow_missing_criteria=True)
    assert lenient.passed and "documentation" not in {c["name"] for c in lenient.criteria}


def test_unusable_score_is_missing_not_zero() -> None:
    run = make_run(metadata={"scores": {**SCORES, "correctness": 9}, "inputs": {"code_file": "a"}})
    ev = evaluate_run(run, workflow=DEFINITION)
    assert ev.missing_criteria[0]["name"] == "correctness" and not ev.passed


def test_scorer_scores_win_over_run_scores() -> None:
    ev = evaluate_run(make_run(), workflow=DEFINITION, scores={"correctness": 3})
    row = next(c for c in ev.criteria if c["name"] == "correctness")
    assert (row["raw"], row["source"], row["normalized"]) == (3, "scorer", 0.5)
    assert row["floor"] == 0.70 and row["floor_passed"] is False
    assert (
        ev.grade == "D" and ev.grade_capped and ev.floor_violations[0]["criterion"] == "correctness"
    )


def test_efficiency_criterion_uses_runtime_against_slo() -> None:
    run = make_run(end_time="2026-01-01T00:00:12Z")
    ev = evaluate_run(run, workflow=DEFINITION)
    row = next(c for c in ev.criteria if c["name"] == "efficiency")
    assert row["source"] == "efficiency" and row["raw"] == pytest.approx(12.0)
    expected = normalize("lower_is_better", 12.0, slo_good=8, slo_bad=30)
    assert row["normalized"] == pytest.approx(expected)
    assert ev.efficiency["normalized"]["latency_s"] == pytest.approx(expected)


def test_budgets_and_retry_amplification() -> None:
    wf = load_workflow(
        {
            **DEFINITION,
            "evaluation": {"scoring_profile": "B", "budgets": {"tokens": 1000, "cost_usd": 1}},
        }
    )
    steps = [
        make_step("parse", retry_count=1, metadata={"tokens": 700, "cost": 0.25}),
        make_step("review", metadata={"input_tokens": 300, "output_tokens": 200}),
        make_step("lint", "skipped"),
    ]
    ev = evaluate_run(make_run(steps=steps), workflow=wf)
    raw = ev.efficiency["raw"]
    assert raw["tokens"] == 1200 and raw["cost_usd"] == 0.25
    assert raw["retry_amplification"] == (2 + 1) / 2
    assert ev.efficiency["budgets"]["tokens"] == {"budget": 1000, "used": 1200, "within": False}
    assert ev.efficiency["budgets"]["cost_usd"]["within"] is True


def test_profile_argument_overrides_definition() -> None:
    ev = evaluate_run(make_run(), workflow=DEFINITION, profile="D")
    assert ev.profile == "D" and "handoff_graph_respected" in ev.hard_gates
    assert not ev.hard_gates["handoff_graph_respected"]  # no inputs: never passes silently


def test_payload_is_json_ready() -> None:
    import json

    payload = evaluate_run(make_run(overall_status="failed"), workflow=DEFINITION).to_dict()
    again = json.loads(json.dumps(payload))
    for key in (
        "weighted_score",
        "grade",
        "passed",
        "pass_threshold",
        "criteria",
        "hard_gates",
        "gate_failures",
        "floor_violations",
        "grade_capped",
        "step_scores",
        "agents",
        "rubric_id",
        "rubric_version",
        "missing_criteria",
        "efficiency",
    ):
        assert key in again
    assert again["gate_failures"][0]["name"] == "overall_status_success"
