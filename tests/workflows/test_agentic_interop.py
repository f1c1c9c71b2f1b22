"""Round trip of agentic-workflows (``agentic_v2``) results and run logs.

``WORKFLOW_RESULT_SCHEMA`` below is written from the documented fields of that project's
``agentic_v2.contracts.messages.WorkflowResult`` and ``StepResult`` pydantic models (field names,
types, bounds and which fields may be ``null``): ``tier`` is an optional integer in 0..5,
``final_output``, ``input_data``, ``output_data`` and ``metadata`` are objects, ``start_time`` is a
date-time that is never ``null``, and extra fields are allowed. The run-log shape is the one its
``RunLogger`` writes (``run_id``, ``status``, per-step ``tokens_used`` and ``duration_ms``).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aieval.grading import CriterionScore, Profile, grade, load_profile
from aieval.workflows import WorkflowRun, evaluate_run, load_run

_STATUSES = ["pending", "running", "success", "failed", "skipped", "retrying"]
_TIME = {"type": "string", "format": "date-time"}
_OPT_STR = {"anyOf": [{"type": "string"}, {"type": "null"}]}

STEP_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["step_name", "status"],
    "properties": {
        "step_name": {"type": "string", "minLength": 1},
        "status": {"enum": _STATUSES},
        "agent_role": _OPT_STR,
        "tier": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 5}, {"type": "null"}]},
        "model_used": _OPT_STR,
        "input_data": {"type": "object"},
        "output_data": {"type": "object"},
        "error": _OPT_STR,
        "error_type": _OPT_STR,
        "start_time": _TIME,
        "end_time": {"anyOf": [_TIME, {"type": "null"}]},
        "retry_count": {"type": "integer", "minimum": 0},
        "metadata": {"type": "object"},
    },
    "additionalProperties": True,
}

WORKFLOW_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["workflow_id", "workflow_name", "overall_status"],
    "properties": {
        "workflow_id": {"type": "string", "minLength": 1},
        "workflow_name": {"type": "string", "minLength": 1},
        "steps": {"type": "array", "items": STEP_RESULT_SCHEMA},
        "overall_status": {"enum": _STATUSES},
        "start_time": _TIME,
        "end_time": {"anyOf": [_TIME, {"type": "null"}]},
        "final_output": {"type": "object"},
        "metadata": {"type": "object"},
    },
    "additionalProperties": True,
}

_FORMATS = jsonschema.FormatChecker(formats=())


@_FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if isinstance(value, str):
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


def _validate(document: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(WORKFLOW_RESULT_SCHEMA, format_checker=_FORMATS).validate(
        document
    )


def _result(**changes: Any) -> dict[str, Any]:
    """A WorkflowResult as agentic_v2 dumps it (``model_dump(mode="json")``)."""
    data: dict[str, Any] = {
        "workflow_id": "wf-code_review",
        "workflow_name": "code_review",
        "overall_status": "success",
        "start_time": "2026-03-02T09:00:00Z",
        "end_time": "2026-03-02T09:00:04.500000Z",
        "final_output": {"review": {"verdict": "APPROVED"}, "summary": "ok"},
        "metadata": {"tokens_used": 1200},
        "total_duration_ms": 4500.0,
        "success_rate": 100.0,
        "steps": [
            {
                "step_name": "review_code",
                "status": "success",
                "agent_role": "reviewer",
                "tier": 2,
                "model_used": "gh:gpt-4o-mini",
                "input_data": {"code_file": "a.py"},
                "output_data": {"review": "ok"},
                "error": None,
                "error_type": None,
                "start_time": "2026-03-02T09:00:00Z",
                "end_time": "2026-03-02T09:00:03Z",
                "retry_count": 0,
                "metadata": {"tokens_used": 700},
                "is_success": True,
                "duration_ms": 3000.0,
            },
            {"step_name": "summarize", "status": "success", "tier": 0, "retry_count": 0},
        ],
    }
    data.update(changes)
    return data


def test_the_schema_accepts_a_source_result_and_refuses_nulls() -> None:
    _validate(_result())
    with pytest.raises(jsonschema.ValidationError):
        _validate(_result(final_output=None))
    with pytest.raises(jsonschema.ValidationError):
        _validate(_result(steps=[{"step_name": "s", "status": "success", "tier": "2"}]))


def test_a_loaded_result_round_trips_to_a_valid_document(tmp_path: Path) -> None:
    file = tmp_path / "run.json"
    file.write_text(json.dumps(_result()))
    back = load_run(file).to_dict()
    _validate(back)
    assert [s["tier"] for s in back["steps"]] == [2, 0]
    assert back["final_output"] == _result()["final_output"]
    assert WorkflowRun.from_dict(back).to_dict() == back


def test_absent_fields_are_omitted_not_null() -> None:
    minimal = {"workflow_id": "r1", "workflow_name": "w", "overall_status": "failed"}
    back = WorkflowRun.from_dict({**minimal, "steps": [{"step_name": "a", "status": "failed"}]})
    data = back.to_dict()
    _validate(data)
    assert "final_output" not in data and "start_time" not in data
    assert None not in data.values() and None not in data["steps"][0].values()


def test_a_text_tier_stays_text_and_a_boolean_tier_is_refused() -> None:
    run = WorkflowRun.from_dict({"workflow_id": "r", "steps": [{"step_name": "a", "tier": "fast"}]})
    assert run.steps[0].tier == "fast"
    with pytest.raises(Exception, match=r"steps\[0\], field 'tier'"):
        WorkflowRun.from_dict({"workflow_id": "r", "steps": [{"step_name": "a", "tier": True}]})


def _run_log() -> dict[str, Any]:
    """A record as agentic_v2's RunLogger writes it (no step start/end, durations in ms)."""
    return {
        "run_id": "wf-support",
        "workflow_name": "support",
        "status": "success",
        "total_duration_ms": 2500.0,
        "start_time": "2026-03-02T09:00:00+00:00",
        "end_time": None,
        "dataset": {"source": "local"},
        "steps": [
            {
                "step_name": "draft",
                "status": "success",
                "tier": 1,
                "duration_ms": 1500.0,
                "tokens_used": 420,
                "input": {"q": "hi"},
                "output": {"answer": "hello"},
                "metadata": None,
                "start_time": None,
                "end_time": None,
            },
            {"step_name": "check", "status": "success", "duration_ms": 250, "tokens_used": 80},
        ],
        "final_output": {"answer": "hello"},
    }


def test_a_run_log_reads_tokens_used_and_duration_ms(tmp_path: Path) -> None:
    file = tmp_path / "log.json"
    file.write_text(json.dumps(_run_log()))
    run = load_run(file)
    assert [s.tokens for s in run.steps] == [420, 80]
    assert [s.duration_s for s in run.steps] == [1.5, 0.25]
    assert run.tokens == 500 and run.duration_s == 2.5
    assert run.steps[0].outputs == {"answer": "hello"} and run.steps[0].tier == 1
    again = WorkflowRun.from_dict(run.to_dict())
    assert [s.duration_s for s in again.steps] == [1.5, 0.25] and again.tokens == 500
    assert again.duration_s == 2.5
    agents = evaluate_run(run, profile="B").agents["unassigned"]
    assert agents["tokens"] == 500 and agents["duration_s"] == pytest.approx(1.75)


def test_a_negative_duration_is_refused_with_its_field() -> None:
    data = {"workflow_id": "r", "steps": [{"step_name": "a", "duration_ms": -3}]}
    with pytest.raises(Exception, match=r"steps\[0\], field 'duration_ms'"):
        WorkflowRun.from_dict(data)


DEFINITION = {
    "name": "support",
    "outputs": {"answer": {"from": "${steps.draft.outputs.answer}"}},
    "steps": [{"name": "draft"}],
}


@pytest.mark.parametrize("workflow", [pytest.param(DEFINITION, id="defined"), None])
def test_unresolved_required_outputs_in_metadata_fail_the_gate(workflow: Any) -> None:
    data = _result(
        final_output={"answer": "placeholder"},
        metadata={"unresolved_required_outputs": ["answer"]},
    )
    ev = evaluate_run(data, workflow=workflow, profile="B")
    assert ev.hard_gates["required_outputs_present"] is False
    failure = next(g for g in ev.gate_failures if g.name == "required_outputs_present")
    assert "unresolved: answer" in failure.reason and ev.grade == "F"
    clean = evaluate_run(_result(final_output={"answer": "x"}), workflow=workflow, profile="B")
    assert clean.hard_gates["required_outputs_present"] is True


def test_correctness_rubric_gets_the_default_correctness_floor() -> None:
    g = grade(
        hard_gates={},
        required_gates=(),
        criteria=[
            CriterionScore("correctness_rubric", 0.69, weight=0.5),
            CriterionScore("documentation", 0.73, weight=0.5),
        ],
    )
    assert g.band == "C" and g.grade == "D" and not g.passed
    floor = g.floor_failures[0]
    assert (floor.criterion, floor.floor, floor.source, floor.category) == (
        "correctness_rubric",
        0.70,
        "default",
        "correctness",
    )
    assert any("(default correctness floor)" in line for line in g.placement)


@pytest.mark.parametrize(
    ("name", "category", "expected"),
    [
        pytest.param("safety_check", None, 0.80, id="safety-prefix"),
        pytest.param("validation-schema", None, 0.80, id="validation-prefix"),
        pytest.param("argument_correctness", None, None, id="suffix-is-not-a-category"),
        pytest.param("correctness_rubric", "safety", 0.80, id="declared-category-decides"),
        pytest.param("review", "correctness", 0.70, id="declared-correctness"),
    ],
)
def test_default_floors_by_category_or_name(
    name: str, category: str | None, expected: float | None
) -> None:
    g = grade(
        hard_gates={},
        required_gates=(),
        criteria=[CriterionScore(name, 0.95, category=category)],
    )
    assert g.criteria[0].critical_floor == expected


def test_the_evaluation_payload_says_which_default_floor_applied() -> None:
    base = load_profile("B").model_dump()
    base["criteria"] = [
        {"name": "correctness_rubric", "weight": 0.6, "formula_id": "zero_one", "kind": "judge"},
        {"name": "documentation", "weight": 0.4, "formula_id": "zero_one", "kind": "judge"},
    ]
    profile = Profile.model_validate(base)
    data = _result(final_output={"review": "ok"})
    ev = evaluate_run(
        data, profile=profile, scores={"correctness_rubric": 0.69, "documentation": 0.72}
    )
    payload = ev.to_dict()
    row = next(c for c in payload["criteria"] if c["name"] == "correctness_rubric")
    assert (row["floor"], row["floor_source"], row["floor_default"], row["floor_passed"]) == (
        0.70,
        "default",
        "correctness",
        False,
    )
    assert payload["grade"] == "D" and not payload["passed"]
    assert payload["floor_violations"][0]["category"] == "correctness"
