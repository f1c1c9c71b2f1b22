"""A run's end brings the planner's statistics up to date where its writes left them far off:
statistics gathered while a run was being written made a comparison's join take minutes."""

from __future__ import annotations

import psycopg
from tests.report.golden.fixture import PAIRS, build_store

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
