"""The retention SQL of docs/team.md, run as the doc gives it, on each backend: old runs go with
their samples, scores and model calls; recent runs and the kept eval's stay."""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from tests.push.helpers import make_run, sample_count

from aieval.store import Store

TEAM_DOC = Path(__file__).resolve().parents[2] / "docs" / "team.md"
DAY = 86_400.0


def doc_sql(backend: str) -> str:
    """The ```sql block of the doc whose first line is ``-- BACKEND``."""
    blocks = re.findall(r"```sql\n(.*?)```", TEAM_DOC.read_text(encoding="utf-8"), re.S)
    (sql,) = [b for b in blocks if b.startswith(f"-- {backend}\n")]
    return sql


def three_runs(location: str) -> dict[str, str]:
    """An old run, a recent one and an old run of the kept eval (``support-qa``); their ids."""
    ids = {
        "old": make_run(location, "nightly", 3),
        "recent": make_run(location, "nightly", 3),
        "kept": make_run(location, "support-qa", 3),
    }
    ages = {"old": 200 * DAY, "recent": 10 * DAY, "kept": 400 * DAY}
    for key, run_id in ids.items():
        when = time.time() - ages[key]
        sql(location, f"UPDATE runs SET created_at = {when!r} WHERE id = '{run_id}'")
    assert count(location, "samples", ids["old"]) == 3
    return ids


def sql(location: str, script: str) -> None:
    """Run ``script`` (one or more statements) on the store, as its own client would."""
    if "://" in location:
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(script.encode())  # a script of several statements: simple protocol
        return
    with closing(sqlite3.connect(location, isolation_level=None)) as conn:
        conn.executescript(script)


def count(location: str, table: str, run_id: str) -> int:
    """Rows of ``run_id`` in ``table``."""
    query = f"SELECT COUNT(*) FROM {table} WHERE run_id = '{run_id}'"
    if "://" in location:
        import psycopg

        with psycopg.connect(location) as conn:
            row = conn.execute(query.encode()).fetchone()
    else:
        with closing(sqlite3.connect(location)) as conn:
            row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])


def test_the_documented_retention_sql_deletes_old_runs_with_their_rows(
    store_location: str,
) -> None:
    ids = three_runs(store_location)
    sql(store_location, doc_sql("PostgreSQL" if "://" in store_location else "SQLite"))
    with Store(store_location) as store:
        assert {run.id for run in store.list_runs(limit=100)} == {ids["recent"], ids["kept"]}
    assert sample_count(store_location) == 6
    for table in ("samples", "scores", "model_calls"):
        assert count(store_location, table, ids["old"]) == 0, table
    assert count(store_location, "scores", ids["recent"]) > 0
