"""Workflow test helpers: a small DAG definition and run builders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aieval.workflows import WorkflowRun, load_run

DEFINITION: dict[str, Any] = {
    "name": "review",
    "version": 3,
    "inputs": {
        "code_file": {"type": "string"},
        "language": {"type": "string", "enum": ["python", "go"], "default": "python"},
    },
    "steps": [
        {"name": "parse", "agent": "parser"},
        {"name": "lint", "agent": "linter", "critical": False},
        {"name": "review", "agent": "reviewer"},
    ],
    "outputs": {
        "report": {"from": "${steps.review.outputs.report}"},
        "notes": {"from": "${steps.lint.outputs.notes}", "optional": True},
    },
    "output_schema": {
        "type": "object",
        "required": ["report"],
        "properties": {
            "report": {
                "type": "object",
                "properties": {"issues": {"type": "array", "items": {"type": "integer"}}},
            }
        },
    },
    "evaluation": {"scoring_profile": "B"},
}

SCORES = {"correctness": 5, "completeness": 5, "tool_data_precision": 1.0, "documentation": 5}


def make_step(name: str, status: str = "success", **extra: Any) -> dict[str, Any]:
    return {"step_name": name, "status": status, **extra}


def make_run(**overrides: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "workflow_id": "run-1",
        "workflow_name": "review",
        "overall_status": "success",
        "final_output": {"report": {"issues": [3, 9]}},
        "start_time": "2026-01-01T00:00:00Z",
        "end_time": "2026-01-01T00:00:05Z",
        "steps": [
            make_step("parse", agent_role="parser"),
            make_step("lint", agent_role="linter"),
            make_step("review", agent_role="reviewer"),
        ],
        "metadata": {"scores": dict(SCORES), "inputs": {"code_file": "a.py"}},
    }
    run.update(overrides)
    return run


def run_log(step: dict[str, Any] | None = None, **run: Any) -> dict[str, Any]:
    """A one-step run log with ``run_id`` and ``workflow_id``; ``step`` adds step fields,
    keyword arguments replace run fields."""
    data: dict[str, Any] = {
        "run_id": "r1",
        "workflow_id": "w",
        "status": "success",
        "total_duration_ms": 1500,
        "steps": [{"name": "a", "status": "success", "duration_ms": 5, **(step or {})}],
    }
    data.update(run)
    return data


def load_log(tmp_path: Path, data: dict[str, Any]) -> WorkflowRun:
    """``data`` written to ``tmp_path/log.json`` and read back through :func:`load_run`."""
    file = tmp_path / "log.json"
    file.write_text(json.dumps(data))
    return load_run(file)
