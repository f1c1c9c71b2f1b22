"""A run still being executed by a live process is never resumed: resuming it would run its
samples twice at once. ``resume=True``, ``resume=<id>`` and ``aieval run --resume`` refuse it
with a typed error naming the run, its process and how old its heartbeat is."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.stored import stored_samples, wait_for_samples

from aieval import Example, Store, run
from aieval.errors import RunInProgressError, UserError
from aieval.scorers import exact_match

N = 12
ROWS = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}", "prediction": f"p{i}"}
        for i in range(N)]  # fmt: skip

# A run whose target waits for a release file: it holds the run open (and its heartbeat fresh)
# for as long as the test needs.
CHILD = textwrap.dedent(
    """
    import asyncio, os, sys
    from aieval import run
    from aieval.scorers import exact_match

    release = sys.argv[2]

    async def held(example):
        if example.id != "s0":
            while not os.path.exists(release):
                await asyncio.sleep(0.02)
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}", "prediction": f"p{i}"}
            for i in range(N)]
    run(name="live", dataset=rows, scorers=[exact_match], target=held, concurrency=2,
        store=sys.argv[1])
    """
).replace("range(N)", f"range({N})")


@pytest.fixture
def live_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """A second process running ``live`` in ``runs.db``, held mid-run until released."""
    db, release = tmp_path / "runs.db", tmp_path / "release"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(db), str(release)])
    try:
        wait_for_samples(db, 1, child)
        assert stored_samples(db) == 1 and child.poll() is None, "the child must hold its run open"
        yield child, db, release
    finally:
        release.touch()
        try:
            child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


def test_a_live_run_is_not_resumed_by_name_or_by_id(
    live_run: tuple[subprocess.Popen[bytes], Path, Path],
) -> None:
    child, db, release = live_run
    store = Store(db)
    (held,) = store.list_runs(name="live")
    assert held.status == "running" and held.pid == child.pid
    produced: list[str] = []

    async def again(example: Example) -> str:
        produced.append(example.id)
        return example.prompt

    for resume in (True, held.id):
        with pytest.raises(RunInProgressError) as caught:
            run(name="live", dataset=ROWS, scorers=[exact_match], target=again, store=store,
                resume=resume)  # fmt: skip
        error = caught.value
        message = str(error)
        assert held.id in message and f"pid {child.pid}" in message
        assert socket.gethostname() in message and "heartbeat" in message
        assert "wait" in message.lower() and "stop" in message
        assert (error.run_id, error.pid, error.host) == (held.id, child.pid, socket.gethostname())
        assert error.heartbeat_age_s is not None and 0 <= error.heartbeat_age_s < 60
        assert isinstance(error, UserError)
    assert produced == []
    # the live run's row is untouched: still owned by the child, no second run was stored
    row = store.get_run(held.id)
    assert (row.status, row.pid) == ("running", child.pid)
    assert store.count_runs(name="live") == 1
    release.touch()
    assert child.wait(timeout=60) == 0
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT sample_id FROM samples")]
    assert sorted(ids) == sorted(r["id"] for r in ROWS)  # every sample once, by the child
    assert store.get_run(held.id).status == "completed"


def test_aieval_run_resume_refuses_a_live_run(
    live_run: tuple[subprocess.Popen[bytes], Path, Path], tmp_path: Path
) -> None:
    child, db, _ = live_run
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    (tmp_path / "eval.yaml").write_text("name: live\ndataset: data.jsonl\nscorers: [exact_match]\n")
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "eval.yaml", "--resume", "--db", str(db)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    (held,) = Store(db).list_runs(name="live")
    assert held.id in done.stderr and f"pid {child.pid}" in done.stderr
    assert "Traceback" not in done.stderr
    assert stored_samples(db) < N and Store(db).get_run(held.id).pid == child.pid


def _with_owner(db: Path, run_id: str, *, host: str, heartbeat_at: float) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE runs SET status = 'running', pid = ?, host = ?, heartbeat_at = ? WHERE id = ?",
            (4242, host, heartbeat_at, run_id),
        )


def test_a_run_on_another_host_is_live_while_its_heartbeat_is_fresh(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    rows = ROWS
    first = run(name="remote", dataset=rows[:4], scorers=[exact_match], store=db)
    store = Store(db)
    _with_owner(db, first.id, host="worker-7.example", heartbeat_at=time.time() - 30)
    with pytest.raises(RunInProgressError, match=r"pid 4242 on worker-7\.example.* 3\d s ago"):
        run(name="remote", dataset=rows[:4], scorers=[exact_match], store=store, resume=True)
    # once its heartbeat is older than the stale limit, the run reads as interrupted and resumes
    _with_owner(db, first.id, host="worker-7.example", heartbeat_at=time.time() - 600)
    assert store.get_run(first.id).status == "interrupted"
    resumed = run(name="remote", dataset=rows[:4], scorers=[exact_match], store=store, resume=True)
    assert resumed.id == first.id and resumed.status == "completed"
    assert store.get_run(first.id).pid == os.getpid()


def test_two_stores_racing_to_take_over_one_run_cannot_both_win(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    one, two = Store(db), Store(db)
    run_id = one.create_run(name="race")
    one.finish_run(run_id, status="interrupted")
    one.mark_running(run_id)  # the first taker now owns it, alive and with a fresh heartbeat
    with pytest.raises(RunInProgressError, match=run_id):
        two.mark_running(run_id)
