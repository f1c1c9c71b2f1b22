"""A run's end brings the planner's statistics up to date where its writes left them far off:
statistics gathered while a run was being written made a comparison's join take minutes."""

from __future__ import annotations

import time

import psycopg
import pytest
from tests.report.golden.fixture import PAIRS, build_store

from aieval import run
from aieval.scorers import exact_match
from aieval.store import Store


def _reltuples(url: str) -> dict[str, float]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname, reltuples FROM pg_class"
            " WHERE relname IN ('samples', 'scores', 'sample_values')"
        ).fetchall()
    return {str(name): float(count) for name, count in rows}


def test_statistics_taken_mid_write_are_refreshed_when_the_run_ends(pg_url: str) -> None:
    with Store(pg_url) as store:
        # what autovacuum does at a random moment: analyze while the tables are still empty
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ANALYZE samples, scores, sample_values")
        assert set(_reltuples(pg_url).values()) == {0.0}
    with build_store(pg_url) as store:  # writes every run and ends each
        counts = {
            table: store._db.query(f"SELECT COUNT(*) FROM {table}")[0][0]
            for table in ("samples", "scores", "sample_values")
        }
        seen = _reltuples(pg_url)
        for table, count in counts.items():
            # within what the threshold and the analyze's own sample leave, far from the 0 of before
            assert count > 100 and seen[table] >= 0.5 * count, (table, count, seen[table])
        # and the comparison's statements are planned on them: answered, not stalled
        store._db.execute("SET statement_timeout = '30s'")  # a stall fails, never hangs
        assert store.pair_sums(*PAIRS["graded"]) is not None


def _changed_since_analyze(store: Store) -> int:
    (count,) = store._db.query(
        "SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'samples'"
    )[0]
    return int(count)


def test_a_run_s_end_does_not_wait_for_an_analyze_already_under_way(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Eight writers ending together each found the tables' statistics stale and analyzed them
    one after the other (an analyze waits for another's lock): a quarter of the server's CPU
    in the eight-writer bench. A table another session is analyzing is skipped."""
    rows = [{"id": f"s{i}", "prompt": "q", "expected": "a", "prediction": "a"} for i in range(300)]
    with Store(pg_url) as store:
        run(name="ends", dataset=rows, scorers=[exact_match], store=store)
        store._db.execute("UPDATE samples SET latency_s = latency_s")  # stale statistics
        deadline = time.monotonic() + 30  # the server counts a session's changes when it idles
        while _changed_since_analyze(store) < 300 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _changed_since_analyze(store) >= 300
        with psycopg.connect(pg_url) as other:
            # the lock an ANALYZE (or autovacuum's) holds on the table while it runs
            other.execute("LOCK TABLE samples IN SHARE UPDATE EXCLUSIVE MODE")
            store._db.execute("SET lock_timeout = '20s'")  # a wait fails the test, never hangs
            began = time.monotonic()
            store._refresh_statistics()
            waited = time.monotonic() - began
            other.rollback()
        store._db.execute("RESET lock_timeout")
        # skipped, not analyzed (the other session's analyze brings it up to date)
        assert _changed_since_analyze(store) >= 300
    assert waited < 15, waited
    assert "left to the server's own analyze" not in caplog.text
