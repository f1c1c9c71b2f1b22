"""``metadata.unresolved_required_outputs`` / ``unresolved_outputs`` in every shape a runner may
write are read or refused, never ignored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval.errors import WorkflowError
from aieval.workflows import WorkflowRun, evaluate_run, load_run, load_workflow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"
KEYS = ["unresolved_required_outputs", "unresolved_outputs"]


def _run(tmp_path: Path, key: str, value: Any) -> WorkflowRun:
    data = json.loads((EXAMPLES / "code_review_runs" / "cr-001-clean.json").read_text())
    data.setdefault("metadata", {})[key] = value
    file = tmp_path / "cr-001.json"
    file.write_text(json.dumps(data))
    return load_run(file)


def _gate(tmp_path: Path, key: str, value: Any) -> Any:
    workflow = load_workflow(EXAMPLES / "code_review.yaml")
    ev = evaluate_run(_run(tmp_path, key, value), workflow=workflow)
    gate = next(g for g in ev.gate_results if g.name == "required_outputs_present")
    return ev, gate


def test_the_clean_example_passes(tmp_path: Path) -> None:
    ev, gate = _gate(tmp_path, "unused", None)
    assert gate.passed and ev.grade == "A"


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(["summary"], id="list"),
        pytest.param("summary", id="one-name"),
        pytest.param({"summary": "the summarizer timed out"}, id="name-to-reason"),
    ],
)
def test_an_unresolved_required_output_fails_the_gate(tmp_path: Path, key: str, value: Any) -> None:
    ev, gate = _gate(tmp_path, key, value)
    assert not gate.passed and "unresolved: summary" in gate.reason
    assert ev.grade == "F" and not ev.passed


@pytest.mark.parametrize("key", KEYS)
def test_an_undeclared_unresolved_output_fails_the_gate(tmp_path: Path, key: str) -> None:
    ev, gate = _gate(tmp_path, key, ["nonexistent_output"])
    assert not gate.passed and ev.grade == "F"
    assert "nonexistent_output" in gate.reason and "does not declare" in gate.reason
    assert gate.evidence["undeclared"] == ["nonexistent_output"]
    assert gate.reason.count("nonexistent_output") == 2  # once as missing, once as undeclared


def test_a_required_output_the_workflow_calls_optional_fails_when_the_runner_says_so(
    tmp_path: Path,
) -> None:
    ev, gate = _gate(tmp_path, "unresolved_required_outputs", ["lint_findings"])
    assert not gate.passed and "lint_findings" in gate.reason and ev.grade == "F"


def test_an_unresolved_optional_output_passes_and_is_reported(tmp_path: Path) -> None:
    ev, gate = _gate(tmp_path, "unresolved_outputs", ["lint_findings"])
    assert gate.passed and ev.grade == "A"
    assert gate.evidence["unresolved_optional"] == ["lint_findings"]
    assert "lint_findings" in gate.reason


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(5, id="number"),
        pytest.param(True, id="boolean"),
        pytest.param([1, 2], id="list-of-numbers"),
        pytest.param([{"name": "summary"}], id="list-of-objects"),
        pytest.param("", id="empty-name"),
    ],
)
def test_an_unreadable_shape_is_refused_naming_the_field(
    tmp_path: Path, key: str, value: Any
) -> None:
    with pytest.raises(WorkflowError, match=rf"cr-001.json, field 'metadata.{key}'"):
        _run(tmp_path, key, value)
    run = WorkflowRun("r", outputs={"summary": "x"}, metadata={key: value})
    with pytest.raises(WorkflowError, match=rf"field 'metadata.{key}'"):
        evaluate_run(run, profile="B")


def test_without_a_definition_every_listed_output_fails(tmp_path: Path) -> None:
    run = WorkflowRun("r", outputs={"summary": "x"}, metadata={"unresolved_outputs": ["notes"]})
    gate = next(
        g
        for g in evaluate_run(run, profile="B").gate_results
        if g.name == "required_outputs_present"
    )
    assert not gate.passed and "notes" in gate.reason
