"""SQLite binds values as they are and converts only a batch holding text UTF-8 cannot hold."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aieval.store._encoding import to_db_rows
from aieval.store._location import parse_location
from aieval.store._sqlite import SqliteBackend


def _backend(tmp_path: Path) -> SqliteBackend:
    backend = SqliteBackend(parse_location(tmp_path / "s.db"))
    backend.create_table("CREATE TABLE t (a, b INTEGER UNIQUE)")
    return backend


def test_a_surrogate_after_plain_rows_stores_every_row_once_as_the_old_conversion(
    tmp_path: Path,
) -> None:
    rows = [("ok", 1), ("é", 2), ("\ud83d", 3), ("tail \udc80", 4), ("last", 5)]
    backend = _backend(tmp_path)
    with backend.transaction():
        backend.executemany("INSERT INTO t (a, b) VALUES (?, ?)", rows)
    with sqlite3.connect(tmp_path / "s.db") as raw:  # the stored values, bytes as bytes
        stored = raw.execute("SELECT a, b FROM t ORDER BY b").fetchall()
    with sqlite3.connect(":memory:") as old:  # what converting every row first stored
        old.execute("CREATE TABLE t (a, b)")
        old.executemany("INSERT INTO t VALUES (?, ?)", to_db_rows(rows))
        assert stored == old.execute("SELECT a, b FROM t ORDER BY b").fetchall()
    assert backend.query("SELECT a FROM t WHERE b = 3") == [("\ud83d",)]
    # a surrogate in a statement's parameters is found by it, as before
    assert backend.query("SELECT b FROM t WHERE a = ?", ("tail \udc80",)) == [(4,)]
    backend.execute("DELETE FROM t WHERE a = ?", ("\ud83d",))
    assert backend.query("SELECT count(*) FROM t") == [(4,)]
    pages: list[object] = []
    backend.pages("SELECT b FROM t WHERE a = ?", ("tail \udc80",), pages.extend)
    assert pages == [(4,)]
    backend.close()


def test_a_failed_batch_outside_a_transaction_leaves_no_row_and_no_transaction(
    tmp_path: Path,
) -> None:
    backend = _backend(tmp_path)
    with pytest.raises(sqlite3.IntegrityError):
        # the surrogate's retry reaches the repeated key: none of the batch stays
        backend.executemany(
            "INSERT INTO t (a, b) VALUES (?, ?)", [("a", 1), ("\udc80", 2), ("c", 2)]
        )
    assert backend.query("SELECT count(*) FROM t") == [(0,)]
    assert backend._db.in_transaction is False
    backend.executemany("INSERT INTO t (a, b) VALUES (?, ?)", [("a", 1)])
    assert backend.query("SELECT a FROM t") == [("a",)]
    backend.close()
