"""Workflow mode of run(): callable targets, recorded runs, compatibility, stored payloads."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.support.workflows import DEFINITION, SCORES, make_run, make_step

from aieval import run
from aieval._types import Example
from aieval.errors import ConfigError
from aieval.runner import load_eval, run_eval
from aieval.store import Store
from aieval.workflows import WorkflowRun, step

ROWS = [{"id": "a", "input": {"code_file": "a.py"}}, {"id": "b", "input": {"code_file": "b.py"}}]


def _scored(example: Example) -> dict[str, Any]:
    return {"report": {"issues": [1]}, "file": example.input["code_file"]}


def _scorers() -> list[Any]:
    from aieval import scorer

    @scorer(name="correctness")
    def correctness(prediction: str, expected: Any) -> float:
        return 1.0

    return [correctness]


def test_callable_that_raises_is_a_failed_run_not_a_crash(tmp_path: Path) -> None:
    def workflow(example: Example) -> dict[str, Any]:
        with step("parse", agent_role="parser"):
            pass
        with step("review", agent_role="reviewer"):
            raise RuntimeError("model unavailable")

    result = run(
        name="wf",
        dataset=ROWS,
        scorers=[],
        target=workflow,
        workflow=DEFINITION,
        store=tmp_path / "db.sqlite",
    )
    assert result.status == "completed" and result.pass_rate == 0.0
    sample = result.samples[0]
    ev = sample.verdict.workflow
    assert sample.passed is False and "model unavailable" in (sample.error or "")
    assert ev["grade"] == "F" and ev["hard_gates"]["overall_status_success"] is False
    assert ev["agents"]["reviewer"]["failures"] == 1 and ev["agents"]["parser"]["failures"] == 0
    assert result.summary.evaluation.grades["F"] == 2


async def test_async_callable_steps_timing_and_retries_are_captured() -> None:
    async def workflow(example: Example) -> dict[str, Any]:
        with step("review", agent_role="reviewer") as s:
            s.retry_count = 2
            s.metadata["tokens"] = 40
            s.outputs = {"report": "ok"}
        return {"report": {"issues": [2]}}

    from aieval import run_async

    result = await run_async(
        name="wf", dataset=ROWS[:1], scorers=[], target=workflow, workflow=DEFINITION, store=False
    )
    ev = result.samples[0].verdict.workflow
    assert ev["agents"]["reviewer"]["retries"] == 2 and ev["agents"]["reviewer"]["tokens"] == 40
    assert ev["agents"]["reviewer"]["duration_s"] >= 0
    assert ev["efficiency"]["raw"]["retry_amplification"] == 3.0


def test_callable_returning_workflow_run_and_scorer_criteria() -> None:
    def workflow(example: Example) -> WorkflowRun:
        data = make_run(
            metadata={"scores": {k: v for k, v in SCORES.items() if k != "correctness"}}
        )
        return WorkflowRun.from_dict(data)

    result = run(
        name="wf",
        dataset=ROWS,
        scorers=_scorers(),
        target=workflow,
        workflow=DEFINITION,
        store=False,
    )
    ev = result.samples[0].verdict.workflow
    row = next(c for c in ev["criteria"] if c["name"] == "correctness")
    # the scorer's 0..1 value is already normalized: read with zero_one, not as a Likert point
    assert (row["source"], row["raw"], row["formula_id"]) == ("scorer", 1.0, "zero_one")
    assert row["normalized"] == 1.0 and result.samples[0].passed is True


def test_incompatible_dataset_is_refused_before_any_sample(tmp_path: Path) -> None:
    calls: list[str] = []

    def workflow(example: Example) -> dict[str, Any]:
        calls.append(example.id)
        return {}

    rows = [{"id": "ok", "input": {"code_file": "x"}}, {"id": "bad", "input": {"lang": "go"}}]
    db = tmp_path / "db.sqlite"
    with pytest.raises(ConfigError) as info:
        run(name="wf", dataset=rows, scorers=[], target=workflow, workflow=DEFINITION, store=db)
    assert "missing required inputs: code_file" in str(info.value) and "bad" in str(info.value)
    assert calls == [] and not db.exists()


def test_folder_of_run_logs_is_a_dataset(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "good.json").write_text(json.dumps(make_run()))
    (runs / "failed.json").write_text(json.dumps(make_run(overall_status="failed")))
    db = tmp_path / "db.sqlite"
    result = run(name="recorded", dataset=runs, scorers=[], workflow=DEFINITION, store=db)
    verdicts = {s.id: s.passed for s in result.samples}
    assert verdicts == {"failed": False, "good": True}
    summary = result.summary.evaluation
    assert summary.gate_failure_rates["overall_status_success"] == 0.5
    assert summary.grades["A"] == 1 and summary.grades["F"] == 1
    with sqlite3.connect(db) as conn:
        stored = [json.loads(x) for (x,) in conn.execute("SELECT verdict FROM samples")]
        extras = [json.loads(x) for (x,) in conn.execute("SELECT extra FROM samples")]
    assert {v["grade"] for v in stored} == {"A", "F"}
    assert all(v["grader"] == "workflow" and v["workflow"]["grade"] == v["grade"] for v in stored)
    assert not any("evaluation" in e for e in extras)


def test_eval_file_with_workflow(tmp_path: Path) -> None:
    import yaml

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r1.json").write_text(json.dumps(make_run()))
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(DEFINITION))
    (tmp_path / "eval.yaml").write_text("name: e\ndataset: runs\nworkflow: wf.yaml\nprofile: B\n")
    config = load_eval(tmp_path / "eval.yaml")
    [result] = run_eval(config, store=Store(tmp_path / "db.sqlite"))
    assert result.samples[0].verdict.workflow["profile"] == "B"
    assert result.summary.evaluation.runs == 1


def test_run_folder_version_does_not_depend_on_its_location(tmp_path: Path) -> None:
    import shutil

    from aieval.datasets import load_dataset
    from aieval.workflows._runner import WorkflowMode

    source = Path(__file__).parents[2] / "examples" / "workflows" / "code_review_runs"
    copy = tmp_path / "elsewhere" / "runs"
    shutil.copytree(source, copy)
    versions = {load_dataset(WorkflowMode.rows(folder)).scan().version for folder in (source, copy)}
    assert len(versions) == 1


def _steps_with_usage() -> list[dict[str, Any]]:
    return [
        make_step(
            "parse",
            agent_role="parser",
            metadata={"input_tokens": 100, "output_tokens": 20, "cost": 0.01},
        ),
        make_step(
            "review",
            agent_role="reviewer",
            retry_count=2,
            metadata={"input_tokens": 300, "output_tokens": 80, "cost": 0.05},
        ),
        make_step("lint", agent_role="linter"),  # no usage recorded: unknown, not zero
    ]


def test_recorded_run_usage_reaches_the_sample_and_the_report(tmp_path: Path) -> None:
    from aieval.report import build_report

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r1.json").write_text(json.dumps(make_run(steps=_steps_with_usage())))
    (runs / "r2.json").write_text(json.dumps(make_run()))  # no usage at all
    db = Store(tmp_path / "db.sqlite")
    result = run(name="usage", dataset=runs, scorers=[], workflow=DEFINITION, store=db)
    by_id = {s.id: s for s in result.samples}
    r1, r2 = by_id["r1"], by_id["r2"]
    assert (r1.input_tokens, r1.output_tokens, r1.retries) == (400, 100, 2)
    assert r1.cost == pytest.approx(0.06)
    assert (r2.input_tokens, r2.output_tokens, r2.cost, r2.retries) == (None, None, None, 0)
    report = build_report(db, result.id).to_dict()
    assert report["tokens"] == {
        "input": 400,
        "output": 100,
        "total": 500,
        "target": {"input": 400, "output": 100, "total": 500},
        "judges": {"input": 0, "output": 0, "total": 0},
    }
    assert report["cost"] == pytest.approx(0.06) and report["retries"] == 2
    # the folder is the dataset's name, not an anonymous list of rows
    assert report["run"]["dataset"] == str(runs)


def test_model_calls_of_a_workflow_target_are_not_counted_twice() -> None:
    from aieval._calls import record_call
    from aieval._records import CallRecord

    def workflow(example: Example) -> WorkflowRun:
        record_call(CallRecord("target", model="m", input_tokens=7, output_tokens=3, cost=0.5))
        return WorkflowRun.from_dict(make_run(steps=_steps_with_usage()))

    result = run(
        name="wf", dataset=ROWS[:1], scorers=[], target=workflow, workflow=DEFINITION, store=False
    )
    sample = result.samples[0]
    # the recorded model call is the authority; the steps' own usage describes the same work
    assert (sample.input_tokens, sample.output_tokens, sample.cost) == (7, 3, 0.5)
