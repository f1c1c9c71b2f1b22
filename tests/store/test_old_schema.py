"""Runs stored by schema version 1 (no pid, host or heartbeat) do not read as running forever."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from aieval import Store, run
from aieval._types import Example
from aieval.store._owner import STALE_AFTER_S
from aieval.store._schema import RUN_COLUMNS_ADDED

ROWS = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(4)]


def _echo(example: Example) -> str:
    return str(example.prompt)


def _dataset_version(tmp_path: Path) -> str:
    """The dataset hash this version records for ROWS (a v1 run of ROWS recorded the same)."""
    result = run(name="probe", dataset=ROWS, scorers=["exact_match"], target=_echo,
                 store=tmp_path / "probe.db")  # fmt: skip
    version = Store(tmp_path / "probe.db").get_run(result.id).dataset_hash
    assert version
    return version


def _v1_store(path: Path) -> None:
    """A real SQLite file laid out as schema version 1: ``runs`` without the owner columns."""
    Store(path).close()
    with sqlite3.connect(path) as db:
        for column in RUN_COLUMNS_ADDED:
            db.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with sqlite3.connect(path) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    assert not columns & set(RUN_COLUMNS_ADDED)


def _v1_running_run(path: Path, run_id: str, name: str, started: float, dataset_hash: str) -> None:
    """What a version-1 process wrote when it started a run and finished its first sample."""
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO runs (id, name, status, dataset, dataset_hash, n_examples, config,"
            " created_at, started_at) VALUES (?, ?, 'running', 'rows', ?, ?, ?, ?, ?)",
            (run_id, name, dataset_hash, len(ROWS), json.dumps({"name": name}), started, started),
        )
        db.execute(
            "INSERT INTO samples (run_id, sample_id, idx, input, expected, prediction, passed,"
            " created_at) VALUES (?, 's0', 0, ?, ?, 'p0', 1, ?)",
            (run_id, json.dumps("p0"), json.dumps("p0"), started + 1),
        )
        db.execute(
            "INSERT INTO scores (run_id, sample_id, scorer, value) VALUES (?, 's0', 'exact_match',"
            " 1.0)",
            (run_id,),
        )


def test_a_long_dead_v1_run_reads_as_interrupted_and_resumes(tmp_path: Path) -> None:
    version = _dataset_version(tmp_path)
    path = tmp_path / "old.db"
    _v1_store(path)
    an_hour_ago = time.time() - 3600
    _v1_running_run(path, "deadbeef0001", "legacy", an_hour_ago, version)
    _v1_running_run(path, "fresh0000001", "legacy-live", time.time(), version)

    store = Store(path)  # opening it migrates the file in place
    dead, fresh = store.get_run("deadbeef0001"), store.get_run("fresh0000001")
    assert (dead.pid, dead.host, dead.heartbeat_at) == (None, None, None)
    assert dead.status == "interrupted"
    # just started by an old process that records no heartbeat: it may still be working
    assert fresh.status == "running"
    statuses = {r.id: r.status for r in store.list_runs()}
    assert statuses["deadbeef0001"] == "interrupted"
    unfinished = store.latest_unfinished("legacy")
    assert unfinished is not None and unfinished.id == "deadbeef0001"
    store.close()

    produced: list[str] = []

    def target(example: Example) -> str:
        produced.append(example.id)
        return str(example.prompt)

    result = run(name="legacy", dataset=ROWS, scorers=["exact_match"], target=target,
                 store=path, resume=True)  # fmt: skip
    assert result.id == "deadbeef0001" and result.status == "completed"
    assert sorted(produced) == ["s1", "s2", "s3"], "the v1 sample is kept, not run again"
    assert len(result.samples) == 4 and result.metrics["exact_match"] == 1.0
    with Store(path) as again:
        assert again.get_run("deadbeef0001").status == "completed"


def test_the_v1_rule_is_the_heartbeat_rule(tmp_path: Path) -> None:
    version = _dataset_version(tmp_path)
    path = tmp_path / "old.db"
    _v1_store(path)
    margin = 5.0
    _v1_running_run(path, "justover0001", "a", time.time() - STALE_AFTER_S - margin, version)
    _v1_running_run(path, "justunder001", "b", time.time() - STALE_AFTER_S + margin, version)
    with Store(path) as store:
        found: dict[str, Any] = {r.id: r.status for r in store.list_runs()}
    assert found["justover0001"] == "interrupted" and found["justunder001"] == "running"
