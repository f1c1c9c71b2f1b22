"""`Score(None)` is "n/a", not an error; a scorer that scored no sample fails the run (exit 3)."""

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.cli import Cli

AIEVAL = [sys.executable, "-m", "aieval"]

SCORERS = """from aieval import Score, scorer


@scorer
def never(prediction, expected):
    return Score(None, reason="nothing to check here")


@scorer
def order(prediction, expected):
    if expected == "skip":
        return Score(None, reason="no order number in the question")
    return 1.0 if prediction == expected else 0.0
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter: a run's exit status as CI sees it."""
    return subprocess.run([*AIEVAL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def project(tmp_path: Path, scorers: str, expected: list[str]) -> Path:
    with (tmp_path / "rows.jsonl").open("w") as handle:
        for i, value in enumerate(expected):
            row = {"id": f"r{i}", "prompt": "p", "expected": value, "prediction": value}
            handle.write(json.dumps(row) + "\n")
    (tmp_path / "checks.py").write_text(SCORERS)
    (tmp_path / "eval.yaml").write_text(
        f"name: na\ndataset: rows.jsonl\nimports: [checks.py]\nscorers: [{scorers}]\n"
    )
    return tmp_path


def table_row(stdout: str, name: str) -> list[str]:
    """The cells of the summary table's row for scorer ``name``."""
    for line in stdout.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line)]
        if name in cells:
            return [c for c in cells if c]
    raise AssertionError(f"no row for {name!r} in:\n{stdout}")


@pytest.mark.slow
def test_a_scorer_returning_none_on_every_row_exits_3_naming_it(
    tmp_path: Path, in_process: Cli
) -> None:
    project(tmp_path, "never", ["a", "b"])
    done = cli("run", "eval.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "scorer 'never' scored no sample of 2" in done.stderr
    assert "completed with a scorer that scored nothing" in done.stdout
    assert table_row(done.stdout, "never") == ["never", "-", "-", "0", "0", "2"]
    assert "pass rate 0.0%" in done.stdout and "2 unscored samples" in done.stdout
    assert "errored samples" not in done.stdout
    run_id = re.search(r"run (\S+) · completed", done.stdout)
    assert run_id, done.stdout
    report = in_process("report", run_id.group(1), "--db", "r.db", "--format", "json", cwd=tmp_path)
    warnings = json.loads(report.stdout)["warnings"]
    assert "scorer never scored no sample (2 n/a, 0 errors or missing)" in warnings


def test_not_applicable_is_counted_apart_from_errors(tmp_path: Path, in_process: Cli) -> None:
    project(tmp_path, "order", ["skip", "x", "skip", "y"])
    done = cli("run", "eval.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    header = table_row(done.stdout, "metric")
    assert header[-3:] == ["scored", "errors", "n/a"]
    assert table_row(done.stdout, "order") == ["order", "1.000", "0.000", "2", "0", "2"]
    run_id = re.search(r"run (\S+) · completed", done.stdout)
    assert run_id, done.stdout
    shown = in_process("show", run_id.group(1), "--db", "r.db", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert table_row(shown.stdout, "order")[-3:] == ["2", "0", "2"]
    report = in_process("report", run_id.group(1), "--db", "r.db", "--format", "json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    (row,) = [c for c in json.loads(report.stdout)["criteria"] if c["name"] == "order"]
    assert (row["n"], row["errors"], row["not_applicable"]) == (2, 0, 2)
    text = in_process("report", run_id.group(1), "--db", "r.db", cwd=tmp_path)
    assert table_row(text.stdout, "order")[-2:] == ["0", "2"]


def test_show_derives_n_a_for_a_run_stored_before_it_was_counted_apart(
    tmp_path: Path, in_process: Cli
) -> None:
    project(tmp_path, "order", ["skip", "x", "skip", "y"])
    done = cli("run", "eval.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(tmp_path / "r.db") as db:  # the summary as older versions stored it
        (metrics,) = db.execute("SELECT metrics FROM runs").fetchone()
        summary = json.loads(metrics)
        for stats in summary["scorers"].values():
            stats["errors"] += stats.pop("not_applicable")
            stats["missing"] = stats["errors"]
        db.execute("UPDATE runs SET metrics = ?", (json.dumps(summary),))
    shown = in_process("show", "na", "--db", "r.db", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert table_row(shown.stdout, "order")[-3:] == ["2", "0", "2"]
