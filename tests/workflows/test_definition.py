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
