"""A PostgreSQL connection lost mid-run: one cut is survived on a new connection; a server that
stays down fails the run as a full disk does, and resume ends it with nothing lost."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.postgres import (
    TEAMMATE_PASSWORD,
    PostgresServer,
    find_binaries,
    postgres_server,
)

from aieval import Store, run
from aieval.scorers import exact_match


def rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"s{i}", "prompt": f"p{i}", "expected": "x"} for i in range(n)]


def _drop_store_connections(url: str) -> int:
    """Terminate the store's server-side sessions (what a restart or a network cut does)."""
    with psycopg.connect(url, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'aieval' AND datname = current_database()"
        ).fetchall()
    return len(killed)


def test_one_lost_connection_mid_run_is_retried_and_the_run_completes(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(pg_url)
    cut = threading.Event()

    def target(example: Any) -> str:
        if example.id == "s60" and not cut.is_set():
            assert _drop_store_connections(pg_url) >= 1
            cut.set()
        return "x"

    result = run(name="cut", dataset=rows(200), scorers=[exact_match], target=target,
                 store=store, concurrency=1)  # fmt: skip
    assert cut.is_set() and result.status == "completed"
    assert "lost the connection to the store at postgresql://" in caplog.text
    assert result.summary.samples == 200
    with psycopg.connect(pg_url) as conn:
        counts = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT sample_id) FROM samples WHERE run_id = %s",
            (result.id,),
        ).fetchone()
    assert counts == (200, 200)


@pytest.fixture
def own_pg(pg_server: PostgresServer) -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, which it may stop and start again (skipped,
    like ``pg_server``, when the server binaries are absent)."""
    binaries = find_binaries()
    assert binaries is not None
    with postgres_server(binaries) as server:
        yield server


def _stored(url: str, run_name: str) -> int:
    with psycopg.connect(url) as conn:
        made = conn.execute("SELECT to_regclass('samples') IS NOT NULL").fetchone()
        if not (made and made[0]):
            return 0  # the run has not created the store's tables yet
        row = conn.execute(
            "SELECT COUNT(*) FROM samples JOIN runs ON runs.id = samples.run_id"
            " WHERE runs.name = %s",
            (run_name,),
        ).fetchone()
    return int(row[0]) if row else 0


def _wait_until(condition: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # polling a condition on another process's progress


@pytest.mark.slow
def test_a_server_stopped_mid_run_fails_the_run_and_resume_completes_it(
    own_pg: PostgresServer, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply(body["messages"][-1]["content"], delay=0.01)
    admin = own_pg.create_database()
    url = admin.replace("aieval@", f"teammate:{TEAMMATE_PASSWORD}@")
    n = 150
    dataset = "\n".join(f'{{"id": "s{i}", "prompt": "p{i}", "expected": "p{i}"}}' for i in range(n))
    (tmp_path / "rows.jsonl").write_text(dataset + "\n", encoding="utf-8")
    (tmp_path / "e.yaml").write_text(
        "name: stopped\ndataset: rows.jsonl\nscorers: [exact_match]\n"
        f"target: {{provider: openai-compatible, model: m, base_url: '{openai_server.base_url}'}}\n"
        "settings: {concurrency: 2}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    command = [sys.executable, "-m", "aieval", "run", "e.yaml", "--db", url]
    first = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_until(lambda: _stored(admin, "stopped") >= 20, "20 samples stored")
        own_pg.stop("fast")
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode != 0
    assert "cannot write samples of run" in err and "postgresql://teammate:***@" in err
    assert TEAMMATE_PASSWORD not in out + err
    assert "Traceback" not in err
    own_pg.start()
    stored = _stored(admin, "stopped")
    assert 20 <= stored < n
    resumed = subprocess.run(
        [*command, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    with Store(admin) as store:
        (row,) = store.list_runs(name="stopped")
        assert row.status == "completed" and row.metrics is not None
        assert row.metrics["samples"] == n
    with psycopg.connect(admin) as conn:
        counts = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT sample_id), SUM(passed) FROM samples"
        ).fetchone()
    assert counts == (n, n, n)
