"""Issue 44's acceptance: ``kill -9`` of a real ``aieval serve --online`` process during a
backfill, then a restart: every matched trace ends scored (or sampled out) exactly once, with
one sample each, and the status adds up (SQLite; the engine's tests cover PostgreSQL).

The traces are sent by the OpenTelemetry SDK; the rule's ``settle_s`` is a day, so only the
backfill asked over the API enqueues them. The test holds the store's write lock once the
backfill's first rows are in, so the kill lands while it is under way (before any claim: a
killed server's claims wait out their 300 s lease, tested by the engine's own tests)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from tests.online.accept_support import AUTH, export_traces, status_adds_up, subprocess_serve
from tests.support.cli import Cli

from aieval import Store
from aieval.online import sampled

pytestmark = pytest.mark.slow

RULES = """\
rules:
  - name: support
    filter: {service_name: shop}
    sampling_rate: 0.8
    settle_s: 86400
    incomplete_after_s: 86400
    scoring: {profile: agent}
"""


def _held_mid_backfill(db: Path, proc: subprocess.Popen[str]) -> sqlite3.Connection:
    """Wait until the server enqueued the backfill's first rows, then hold the store's write
    lock, so the server stops at its next write: the backfill is under way when it is
    killed. Answers the connection holding the lock."""
    con = sqlite3.connect(db, timeout=60, isolation_level=None)
    deadline = time.monotonic() + 120
    while con.execute("SELECT count(*) FROM online_work").fetchone() == (0,):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.002)  # polled finely: the server's next cycle starts the backfill
    con.execute("BEGIN IMMEDIATE")
    return con


def test_kill_9_during_a_backfill_then_a_restart_scores_each_trace_once(
    in_process: Cli, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    db = tmp_path / "runs.db"
    since = time.time() - 1
    with subprocess_serve(db, rules) as (proc, url):
        ids = export_traces(url, 200)
        asked = httpx.post(
            f"{url}/api/online/rules/support/backfill",
            json={"since": since},
            headers=AUTH,
            timeout=60,
        )
        assert asked.status_code == 202, asked.text
        con = _held_mid_backfill(db, proc)
        try:
            (enqueued,) = con.execute("SELECT count(*) FROM online_work").fetchone()
            (done,) = con.execute("SELECT done_at FROM online_backfills").fetchone()
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        finally:
            con.execute("ROLLBACK")
            con.close()
    assert 0 < enqueued < len(ids) and done is None  # killed during the backfill

    store = Store(db)
    with subprocess_serve(db, rules) as (proc, url):
        deadline = time.monotonic() + 300
        while True:  # the restarted server resumes the backfill and scores every row
            work = store.online_work("support")
            if len(work) == len(ids) and all(w.state in ("scored", "skipped") for w in work):
                break
            assert proc.poll() is None and time.monotonic() < deadline, Counter(
                w.state for w in work
            )
            time.sleep(0.2)
        proc.terminate()
    work = store.online_work("support")
    assert sorted(w.trace_id for w in work) == sorted(ids)  # each matched trace once
    kept = {t for t in ids if sampled(t, 0.8)}
    states = Counter(w.reason or w.state for w in work)
    assert states == {"scored": len(kept), "sampled_out": len(ids) - len(kept)}
    runs = {w.run_id for w in work if w.run_id is not None}
    assert sorted(s.id for run_id in runs for s in store.iter_samples(run_id)) == sorted(kept)
    (done,) = store._read("SELECT done_at FROM online_backfills")[0]
    assert done is not None  # the backfill resumed and ended
    store.close()
    shown = in_process("online", "status", "--db", str(db), "--json")
    assert status_adds_up(json.loads(shown.stdout))["support"] == {
        "scored": len(kept),
        "sampled_out": len(ids) - len(kept),
    }
