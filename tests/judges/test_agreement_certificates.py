"""Judge certificates stored on both backends; a store of version 11 gains the table."""

import contextlib
import sqlite3
from typing import Any

import psycopg

from aieval import Store
from aieval.store._schema import SCHEMA_VERSION


def _sql(location: str, sql: str) -> list[tuple[Any, ...]]:
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []
    with contextlib.closing(sqlite3.connect(location)) as db, db:
        return db.execute(sql).fetchall()


def test_certificates_are_stored_and_read_newest_first(store_location: str) -> None:
    with Store(store_location) as store:
        first = store.record_certificate(
            judge="a" * 16, label="faith@m1", n=120, kappa=0.8, bound=0.66, floor=0.6,
            certified_at=100.0,
        )  # fmt: skip
        store.record_certificate(
            judge="b" * 16, label="tone@m1", n=150, kappa=0.9, bound=0.8, floor=0.6,
            certified_at=300.0,
        )  # fmt: skip
        second = store.record_certificate(
            judge="a" * 16, label="faith@m1", n=200, kappa=0.75, bound=0.65, floor=0.6,
            certified_at=200.0,
        )  # fmt: skip
        rows = store.certificates("a" * 16)
        assert [r.id for r in rows] == [second, first]
        assert (rows[0].n, rows[0].kappa, rows[0].bound, rows[0].floor) == (200, 0.75, 0.65, 0.6)
        assert rows[0].label == "faith@m1" and rows[0].certified_at == 200.0
        assert [r.judge for r in store.certificates()] == ["b" * 16, "a" * 16, "a" * 16]
        assert len(store.certificates(limit=1)) == 1


def test_a_version_11_store_gains_the_certificates_table(store_location: str) -> None:
    Store(store_location).close()
    _sql(store_location, "DROP TABLE judge_certificates")
    _sql(store_location, "UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    with Store(store_location) as store:
        assert store.certificates() == []
        store.record_certificate(
            judge="c" * 16, label="j", n=100, kappa=0.7, bound=0.61, floor=0.6, certified_at=1.0
        )
    rows = _sql(store_location, "SELECT value FROM meta WHERE key = 'schema_version'")
    assert str(rows[0][0]) == str(SCHEMA_VERSION) == "13"
