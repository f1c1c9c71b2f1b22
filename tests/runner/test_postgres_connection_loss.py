"""A PostgreSQL connection lost mid-run fails the run, as a full disk does; resume ends it."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest

from aieval import Store, run
from aieval.errors import StoreError
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


def test_a_lost_connection_fails_the_run_and_resume_finishes_it(pg_url: str) -> None:
    store = Store(pg_url)
    cut = threading.Event()

    def target(example: Any) -> str:
        if example.id == "s60" and not cut.is_set():
            assert _drop_store_connections(pg_url) >= 1
            cut.set()
        return "x"

    with pytest.raises(StoreError, match="cannot write samples of run") as caught:
        run(name="cut", dataset=rows(200), scorers=[exact_match], target=target,
            store=store, concurrency=1)  # fmt: skip
    assert "postgresql://" in str(caught.value)
    (row,) = store.list_runs()  # the store connects again
    assert row.status == "failed" and "cannot write samples" in (row.error or "")
    stored = store.count_samples(row.id)
    assert 0 < stored < 200
    assert row.metrics is not None and row.metrics["samples"] == stored
    resumed = run(name="cut", dataset=rows(200), scorers=[exact_match], target=target,
                  store=store, resume=True)  # fmt: skip
    assert resumed.id == row.id and resumed.status == "completed"
    assert resumed.summary["samples"] == 200
    assert sorted(store.completed_sample_ids(row.id)) == sorted(f"s{i}" for i in range(200))
