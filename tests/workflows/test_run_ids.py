"""A run log's ``run_id`` beside its ``workflow_id``, and second names of descriptive fields, are
kept and written back, never dropped."""

from __future__ import annotations

from pathlib import Path

from tests.support.workflows import load_log, run_log

from aieval.workflows import WorkflowRun, evaluate_run


def test_the_run_id_is_kept_beside_the_workflow_id_and_written_back(tmp_path: Path) -> None:
    run = load_log(tmp_path, run_log({"tokens_used": 10}))
    assert (run.run_id, run.workflow_id) == ("r1", "w")
    written = run.to_dict()
    assert written["run_id"] == "r1" and written["workflow_id"] == "w"
    again = WorkflowRun.from_dict(written)
    assert (again.run_id, again.workflow_id, again.tokens) == ("r1", "w", 10)
    assert evaluate_run(run, profile="B").run_id == "r1"


def test_a_run_id_alone_names_the_run(tmp_path: Path) -> None:
    data = run_log()
    del data["workflow_id"]
    run = load_log(tmp_path, data)
    assert (run.run_id, run.workflow_id) == ("r1", "r1")
    assert WorkflowRun.from_dict(run.to_dict()).run_id == "r1"


def test_a_second_name_for_a_descriptive_field_is_kept_in_extra(tmp_path: Path) -> None:
    run = load_log(tmp_path, run_log({"id": "step-7"}, name="Support bot", workflow_name="support"))
    assert run.steps[0].name == "a" and run.steps[0].extra == {"id": "step-7"}
    assert run.workflow_name == "support" and run.extra == {"name": "Support bot"}
    written = run.to_dict()
    assert written["name"] == "Support bot" and written["steps"][0]["id"] == "step-7"
