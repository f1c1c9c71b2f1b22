"""A sample whose target failed has no scores: every scorer counts it as an error (missing
score), in the run summary, the report's criteria table and the CLI, so n + errors = samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aieval import Store, run
from aieval.report import build_report
from aieval.scorers import exact_match, json_valid, scorer

SAMPLES = 20


def _rows() -> list[dict[str, Any]]:
    """v1 answers every row; v2 has no recorded answer on 4 rows (its target fails there)."""
    rows = []
    for i in range(SAMPLES):
        predictions = {"v1": "yes" if i % 3 else "no"}
        if i % 5 != 0:
            predictions["v2"] = "yes"
        rows.append({"id": f"q{i}", "prompt": f"p{i}", "expected": "yes",
                     "predictions": predictions})  # fmt: skip
    return rows


@scorer
def fails_on_q1(prediction: str, expected: Any, *, example: Any = None) -> float:
    if example is not None and example.id == "q1":
        raise ValueError("boom")
    return 1.0


def test_run_summary_counts_failed_targets_as_missing_scores(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    result = run(name="qa", dataset=_rows(), scorers=[exact_match, json_valid, fails_on_q1],
                 model="v2", store=db)  # fmt: skip
    summary = result.summary
    assert summary["target_errors"] == 4
    for name in ("exact_match", "json_valid", "fails_on_q1"):
        stats = summary["scorers"][name]
        assert stats["count"] + stats["errors"] == SAMPLES, name
        assert stats["missing"] == 4
    assert summary["scorers"]["exact_match"]["errors"] == 4
    assert summary["scorers"]["fails_on_q1"]["errors"] == 5  # 4 missing + the scorer's own
    # the totals count each failure once: 4 target errors plus 1 scorer error
    assert result.errors == 5
    assert result.error_count == 5
    assert Store(db).get_run(result.id).metrics["scorers"]["exact_match"]["errors"] == 4


def test_report_criteria_count_failed_targets_as_errors(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    result = run(name="qa", dataset=_rows(), scorers=[exact_match, fails_on_q1], model="v2",
                 store=db)  # fmt: skip
    report = build_report(Store(db), result.id)
    rows = {row["name"]: row for row in report.to_dict()["criteria"]}
    assert (rows["exact_match"]["n"], rows["exact_match"]["errors"]) == (16, 4)
    assert (rows["fails_on_q1"]["n"], rows["fails_on_q1"]["errors"]) == (15, 5)
    assert all(row["n"] + row["errors"] == report.samples for row in rows.values())


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args], cwd=cwd, capture_output=True, text=True,
        timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    with (tmp_path / "data.jsonl").open("w") as handle:
        for row in _rows():
            handle.write(json.dumps(row) + "\n")
    (tmp_path / "ev.yaml").write_text(
        "name: qa\ndataset: data.jsonl\nmodels: [v1, v2]\nscorers: [exact_match]\n"
        "settings: {max_error_rate: 0.5}\n"
    )
    return tmp_path, _cli(["run", "ev.yaml", "--db", "runs.db"], tmp_path)


def _scored_errors(lines: list[str]) -> list[str]:
    """The "scored", "errors" and "n/a" cells of the first exact_match row of a summary table."""
    row = next(ln for ln in lines if ln.startswith("│ exact_match"))
    return [c.strip() for c in row.strip("│").split("│")][-3:]


def test_cli_run_summary_and_side_by_side_table(
    two_runs: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    _, done = two_runs
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    v1, v2 = (i for i, line in enumerate(lines) if line.startswith("qa · v"))
    assert _scored_errors(lines[v1:v2]) == ["20", "0", "0"]
    assert _scored_errors(lines[v2:]) == ["16", "4", "0"]
    comparison = "\n".join(lines[next(i for i, ln in enumerate(lines) if "comparison" in ln) :])
    assert "0.650 (n=20)" in comparison and "1.000 (n=16)" in comparison
    assert "different numbers of samples" in comparison


def test_cli_report_shows_the_failed_targets_as_errors(
    two_runs: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    folder, _ = two_runs
    done = _cli(["report", "qa", "--db", "runs.db"], folder)  # the latest run: v2
    assert done.returncode == 0, done.stderr
    row = next(ln for ln in done.stdout.splitlines() if ln.startswith("│ exact_match"))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[2] == "16" and cells[-2:] == ["4", "0"], row


def test_server_runs_list_counts_each_failure_once(tmp_path: Path) -> None:
    from aieval.server._views import run_item

    db = tmp_path / "runs.db"
    result = run(name="qa", dataset=_rows(), scorers=[exact_match, fails_on_q1], model="v2",
                 store=db)  # fmt: skip
    store = Store(db)
    item = run_item(store, store.get_run(result.id))
    assert item["errors"] == {"target": 4, "scorers": 1}
