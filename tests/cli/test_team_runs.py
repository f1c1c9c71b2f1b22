"""``aieval runs`` shows and filters by git branch, commit and host; ``aieval compare`` by name
says which baseline it picked and why (both backends)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from aieval._records import SampleRecord
from aieval.store import Store

AIEVAL = [sys.executable, "-m", "aieval"]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    env.pop("AIEVAL_DB", None)
    return subprocess.run(
        [*AIEVAL, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


def _run(store: Store, branch: str, sha: str, limit: int | None = None) -> str:
    config = {"git_branch": branch, "dataset": {"limit": limit}}
    run_id = store.create_run(name="qa", git_sha=sha, config=config, dataset_hash="v" * 32)
    store.record_samples(
        run_id, [SampleRecord(id="e1", index=0, input={}, expected="x", prediction="x")]
    )
    store.finish_run(run_id, status="completed", metrics={"samples": 1})
    return run_id


@pytest.mark.slow
def test_runs_shows_and_filters_by_branch_commit_and_host(
    store_location: str, tmp_path: Path
) -> None:
    with Store(store_location) as store:
        on_main = _run(store, "main", "1a2b3c4d5e6f")
        on_dev = _run(store, "dev", "9f8e7d6c5b4a")
    done = _cli("runs", "--db", store_location, "--branch", "main", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(line for line in lines if "branch" in line)
    assert [c.strip() for c in head.split("┃")[1:-1]][6:9] == ["branch", "commit", "host"]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in lines if on_main in line]
    assert rows and rows[0][6:9] == ["main", "1a2b3c4", socket.gethostname()]
    assert on_dev not in done.stdout
    by_commit = _cli("runs", "--db", store_location, "--commit", "9f8e", cwd=tmp_path)
    assert on_dev in by_commit.stdout and on_main not in by_commit.stdout
    none = _cli("runs", "--db", store_location, "--host", "not-this-host", cwd=tmp_path)
    assert none.returncode == 0 and "no runs match" in none.stdout


@pytest.mark.slow
def test_compare_by_name_prints_the_baseline_it_picked_and_why(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        complete = _run(store, "main", "1a2b3c4d5e6f")
        _run(store, "main", "2b3c4d5e6f70", limit=1)
        candidate = _run(store, "feature", "3c4d5e6f7081")
    done = _cli("compare", "qa", candidate, "--db", db, "--format", "json", cwd=tmp_path)
    assert done.returncode in (0, 3), done.stderr
    data = json.loads(done.stdout)
    assert data["baseline"]["id"] == complete
    choice = data["baseline_choice"]
    assert choice["run_id"] == complete and choice["warning"] is None
    assert choice["skipped"] == [{"count": 1, "reason": "made with --limit 1"}]
    assert f"baseline: run {complete} (main@1a2b3c4, " in done.stderr
    assert "skipped 1 newer run: 1 made with --limit 1" in done.stderr
    for command in ("compare", "diff"):
        text = _cli(command, "qa", candidate, "--db", db, cwd=tmp_path)
        assert f"baseline: run {complete}" in text.stdout, command
