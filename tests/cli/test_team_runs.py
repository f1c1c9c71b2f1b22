"""``aieval runs`` shows and filters by git branch, commit and host; ``aieval compare`` by name
says which baseline it picked and why (both backends)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.cli import Done, run_main

from aieval._records import SampleRecord
from aieval.store import Store


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[..., Done]:
    """``aieval ARGS`` in this process, in ``tmp_path``, on a wide page, no default store."""
    monkeypatch.delenv("AIEVAL_DB", raising=False)

    def run(*args: str) -> Done:
        return run_main(capsys, monkeypatch, *args, cwd=tmp_path, env={"COLUMNS": "250"})

    return run


def _run(store: Store, branch: str, sha: str, limit: int | None = None) -> str:
    config = {"git_branch": branch, "dataset": {"limit": limit}}
    run_id = store.create_run(name="qa", git_sha=sha, config=config, dataset_hash="v" * 32)
    store.record_samples(
        run_id, [SampleRecord(id="e1", index=0, input={}, expected="x", prediction="x")]
    )
    store.finish_run(run_id, status="completed", metrics={"samples": 1})
    return run_id


def test_runs_shows_and_filters_by_branch_commit_and_host(
    store_location: str, cli: Callable[..., Done]
) -> None:
    with Store(store_location) as store:
        on_main = _run(store, "main", "1a2b3c4d5e6f")
        on_dev = _run(store, "dev", "9f8e7d6c5b4a")
    done = cli("runs", "--db", store_location, "--branch", "main")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(line for line in lines if "branch" in line)
    assert [c.strip() for c in head.split("┃")[1:-1]][6:9] == ["branch", "commit", "host"]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in lines if on_main in line]
    assert rows and rows[0][6:9] == ["main", "1a2b3c4", socket.gethostname()]
    assert on_dev not in done.stdout
    by_commit = cli("runs", "--db", store_location, "--commit", "9f8e")
    assert on_dev in by_commit.stdout and on_main not in by_commit.stdout
    none = cli("runs", "--db", store_location, "--host", "not-this-host")
    assert none.returncode == 0 and "no runs match" in none.stdout


def test_compare_by_name_prints_the_baseline_it_picked_and_why(
    tmp_path: Path, cli: Callable[..., Done]
) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        complete = _run(store, "main", "1a2b3c4d5e6f")
        _run(store, "main", "2b3c4d5e6f70", limit=1)
        candidate = _run(store, "feature", "3c4d5e6f7081")
    done = cli("compare", "qa", candidate, "--db", db, "--format", "json")
    assert done.returncode in (0, 3), done.stderr
    data = json.loads(done.stdout)
    assert data["baseline"]["id"] == complete
    choice = data["baseline_choice"]
    assert choice["run_id"] == complete and choice["warning"] is None
    assert choice["skipped"] == [{"count": 1, "reason": "made with --limit 1"}]
    assert f"baseline: run {complete} (main@1a2b3c4, " in done.stderr
    assert "skipped 1 newer run: 1 made with --limit 1" in done.stderr
    for command in ("compare", "diff"):
        text = cli(command, "qa", candidate, "--db", db)
        assert f"baseline: run {complete}" in text.stdout, command
