"""A run log's ``run_id`` beside its ``workflow_id``, and second names of descriptive fields, are
kept and written back, never dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aieval.workflows import WorkflowRun, evaluate_run, load_run


def _log(step: dict[str, Any] | None = None, **run: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "run_id": "r1",
        "workflow_id": "w",
        "status": "success",
        "total_duration_ms": 1500,
        "steps": [{"name": "a", "status": "success", "duration_ms": 5, **(step or {})}],
    }
    data.update(run)
    return data


def _load(tmp_path: Path, data: dict[str, Any]) -> WorkflowRun:
    file = tmp_path / "log.json"
    file.write_text(json.dumps(data))
    return load_run(file)


def test_the_run_id_is_kept_beside_the_workflow_id_and_written_back(tmp_path: Path) -> None:
    run = _load(tmp_path, _log({"tokens_used": 10}))
    assert (run.run_id, run.workflow_id) == ("r1", "w")
    written = run.to_dict()
    assert written["run_id"] == "r1" and written["workflow_id"] == "w"
    again = WorkflowRun.from_dict(written)
    assert (again.run_id, again.workflow_id, again.tokens) == ("r1", "w", 10)
    assert evaluate_run(run, profile="B").run_id == "r1"


def test_a_run_id_alone_names_the_run(tmp_path: Path) -> None:
    data = _log()
    del data["workflow_id"]
    run = _load(tmp_path, data)
    assert (run.run_id, run.workflow_id) == ("r1", "r1")
    assert WorkflowRun.from_dict(run.to_dict()).run_id == "r1"


def test_a_second_name_for_a_descriptive_field_is_kept_in_extra(tmp_path: Path) -> None:
    run = _load(tmp_path, _log({"id": "step-7"}, name="Support bot", workflow_name="support"))
    assert run.steps[0].name == "a" and run.steps[0].extra == {"id": "step-7"}
    assert run.workflow_name == "support" and run.extra == {"name": "Support bot"}
    written = run.to_dict()
    assert written["name"] == "Support bot" and written["steps"][0]["id"] == "step-7"
