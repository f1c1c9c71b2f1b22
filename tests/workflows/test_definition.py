"""Workflow definitions: engine files load as they are; errors name file and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.support.workflows import DEFINITION

from aieval.errors import WorkflowError
from aieval.workflows import load_workflow


def test_engine_definition_loads(tmp_path: Path) -> None:
    data = {
        **DEFINITION,
        "capabilities": {"inputs": ["code_file"], "outputs": ["report"]},
        "experimental": True,
    }
    file = tmp_path / "review.yaml"
    file.write_text(yaml.safe_dump(data))
    wf = load_workflow(file)
    assert (wf.id, wf.version) == ("review", "3")
    assert wf.required_inputs == ["code_file"]
    assert wf.required_outputs == ["report"]
    assert wf.capabilities == {"inputs": ["code_file"], "outputs": ["report"]}
    assert wf.evaluation.profile == "B"
    assert wf.inputs["language"].enum == ("python", "go")


def test_no_critical_steps_named_means_every_step_is_critical() -> None:
    wf = load_workflow({"name": "w", "steps": [{"name": "a"}, {"name": "b"}]})
    assert wf.is_critical("a") and wf.is_critical("b") and wf.is_critical("undeclared")


def test_critical_steps_list_limits_criticality() -> None:
    wf = load_workflow(
        {"name": "w", "steps": [{"name": "a"}, {"name": "b"}], "critical_steps": ["a"]}
    )
    assert wf.is_critical("a") and not wf.is_critical("b")


def test_step_marked_not_critical() -> None:
    wf = load_workflow(DEFINITION)
    assert wf.is_critical("parse") and not wf.is_critical("lint")


def test_inline_rubric_in_evaluation_block() -> None:
    block = {
        "rubric_id": "review_v1",
        "scoring_profile": "B",
        "criteria": [
            {
                "name": "correctness",
                "definition": "Right.",
                "evidence_required": ["diff"],
                "weight": 1.0,
                "scale": {str(i): f"level {i}" for i in range(1, 6)},
            }
        ],
    }
    wf = load_workflow({"name": "w", "version": 2, "evaluation": block})
    assert wf.evaluation.rubric is not None
    assert (wf.evaluation.rubric.rubric_id, wf.evaluation.rubric.version) == ("review_v1", "2")


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        pytest.param({"name": None}, "field 'name'", id="no-name"),
        pytest.param({"inputs": {"x": {"type": "blob"}}}, "field 'inputs.x'.type", id="bad-type"),
        pytest.param(
            {"inputs": {"x": {"required": "yes"}}}, "inputs.x'.required", id="bad-required"
        ),
        pytest.param(
            {"outputs": {"o": {"optional": "no"}}}, "outputs.o'.optional", id="bad-optional"
        ),
        pytest.param({"output_schema": {"type": 12}}, "field 'output_schema'", id="bad-schema"),
        pytest.param({"steps": [{"agent": "x"}]}, "field 'steps[0].name'", id="step-no-name"),
        pytest.param(
            {"evaluation": {"allow_missing_criteria": "y"}},
            "allow_missing_criteria",
            id="bad-allow",
        ),
    ],
)
def test_errors_name_file_and_field(tmp_path: Path, patch: dict[str, object], needle: str) -> None:
    file = tmp_path / "wf.yaml"
    file.write_text(yaml.safe_dump({**DEFINITION, **patch}))
    with pytest.raises(WorkflowError) as info:
        load_workflow(file)
    assert str(file) in str(info.value) and needle in str(info.value)


def test_missing_file() -> None:
    with pytest.raises(WorkflowError, match="not found"):
        load_workflow("nowhere/wf.yaml")


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param({"inputs": {"code_file": {"type": "string", "requried": False}}},
                     "field 'inputs.code_file.requried': unknown key; did you mean required?",
                     id="input-required"),
        pytest.param({"outputs": {"report": {"from": "${x}", "optinal": True}}},
                     "field 'outputs.report.optinal': unknown key; did you mean optional?",
                     id="output-optional"),
        pytest.param({"steps": [{"name": "parse"}, {"name": "lint", "critcal": False}]},
                     "field 'steps[1].critcal': unknown key; did you mean critical?",
                     id="step-critical"),
        pytest.param({"steps": {"parse": {"agent": "p"}, "lint": {"depends_om": ["parse"]}}},
                     "field 'steps.lint.depends_om': unknown key; did you mean depends_on?",
                     id="keyed-step"),
    ],
)  # fmt: skip
def test_misspelt_keys_in_inputs_outputs_and_steps_are_refused_with_their_path(
    tmp_path: Path, patch: dict[str, object], message: str
) -> None:
    file = tmp_path / "wf.yaml"
    file.write_text(yaml.safe_dump({**DEFINITION, **patch}))
    with pytest.raises(WorkflowError) as info:
        load_workflow(file)
    assert str(info.value) == f"{file}: {message}"


def test_the_keys_workflow_engines_write_in_steps_inputs_and_outputs_load() -> None:
    wf = load_workflow(
        {
            "name": "engine",
            "inputs": {
                "feature_spec": {"type": "string", "description": "what to build",
                                 "required": True},
                "depth": {"type": "string", "enum": ["quick", "deep"], "default": "quick"},
            },
            "steps": [
                {"name": "plan", "agent": "planner", "description": "plan it",
                 "inputs": {"spec": "${inputs.feature_spec}"}, "outputs": {"plan": "plan"},
                 "tools": ["file_read"], "prompt_file": "planner.md",
                 "model_override": "small"},
                {"name": "code", "agent_role": "coder", "depends_on": ["plan"],
                 "when": "${steps.plan.outputs.plan} != ''", "loop_until": "${done}",
                 "loop_max": 3, "model": "big", "critical": False},
            ],
            "outputs": {"plan": {"from": "${steps.plan.outputs.plan}", "optional": True,
                                 "description": "the plan"}},
        }
    )  # fmt: skip
    assert wf.required_inputs == ["feature_spec"] and wf.required_outputs == []
    assert [s.name for s in wf.steps] == ["plan", "code"] and not wf.is_critical("code")
