"""A run killed with SIGKILL mid-way, then resumed, has every sample exactly once."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aieval import Example, Store, run
from aieval.errors import ConfigError
from aieval.scorers import exact_match

N = 120

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from aieval import run
    from aieval.scorers import exact_match

    async def slow(example):
        await asyncio.sleep(0.02)
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(N)]
    run(name="killme", dataset=rows, scorers=[exact_match], target=slow, concurrency=4,
        store=sys.argv[1])
    """
).replace("range(N)", f"range({N})")


def stored(db: Path) -> int:
    try:
        return sqlite3.connect(db).execute("SELECT COUNT(*) FROM samples").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_kill_then_resume_has_every_sample_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(db)])
    deadline = time.monotonic() + 30
    while stored(db) < 20 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    before = stored(db)
    assert 20 <= before < N, "the child must be killed mid-run"

    store = Store(db)
    (killed,) = store.list_runs(name="killme")
    # nobody could mark it, but its process is gone: it reads as interrupted
    assert killed.status == "interrupted"
    assert killed.pid == child.pid
    done_before = store.completed_sample_ids(killed.id)

    produced: list[str] = []

    async def fast(example: Example) -> str:
        produced.append(example.id)
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(N)]
    result = run(
        name="killme", dataset=rows, scorers=[exact_match], target=fast, store=store, resume=True
    )
    assert result.id == killed.id
    assert sorted(produced) == sorted({f"s{i}" for i in range(N)} - done_before)
    ids = [
        row[0]
        for row in sqlite3.connect(db).execute(
            "SELECT sample_id FROM samples WHERE run_id = ?", (killed.id,)
        )
    ]
    assert len(ids) == N and len(set(ids)) == N
    assert result.summary["samples"] == N
    assert result.metrics["exact_match"] == 1.0
    assert store.get_run(killed.id).status == "completed"


def test_resume_refuses_a_changed_dataset_and_completed_runs(tmp_path: Path) -> None:
    rows = [{"id": "a", "prompt": "x", "prediction": "x", "expected": "x"}]
    first = run(name="r", dataset=rows, scorers=[exact_match], store=tmp_path / "s.db")
    with pytest.raises(ConfigError, match="already completed"):
        run(name="r", dataset=rows, scorers=[exact_match], store=tmp_path / "s.db", resume=first.id)
    changed = [{**rows[0], "expected": "y"}]
    with pytest.raises(ConfigError, match="dataset version"):
        store = Store(tmp_path / "s.db")
        run_id = store.create_run(name="r", dataset_hash="different")
        run(name="r", dataset=changed, scorers=[exact_match], store=store, resume=run_id)


def test_resume_true_without_unfinished_run_starts_fresh(tmp_path: Path) -> None:
    rows = [{"id": "a", "prompt": "x", "prediction": "x"}]
    result = run(
        name="fresh", dataset=rows, scorers=[exact_match], store=tmp_path / "s.db", resume=True
    )
    assert result.status == "completed" and result.summary["samples"] == 1
