"""SQLite inserts a batch's rows by multi-row statements (``SqliteBackend.insert_rows``): every
row stored once, in order, a text UTF-8 cannot hold kept as its bytes, a failure storing none."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from aieval.store import Store, _sqlite
from aieval.store._backend import Insert


def _table(store: Store) -> None:
    store._db.execute("CREATE TABLE t (k INTEGER, a TEXT, b REAL)")


def test_rows_span_several_statements_in_order_with_an_unencodable_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqlite, "ROWS_A_STATEMENT", 100)  # 1,050 rows: 11 statements
    statements: list[str] = []
    with Store(tmp_path / "runs.db") as store:
        _table(store)
        store._db._db.set_trace_callback(statements.append)
        rows = [(i, f"text {i}", i / 7) for i in range(1050)]
        rows[777] = (777, "lone \ud800 surrogate", 777 / 7)
        with store._db.transaction():
            store._db.insert_rows(Insert("t", ("k", "a", "b"), rows))
        store._db._db.set_trace_callback(None)
        back = store._db.query("SELECT k, a, b FROM t ORDER BY rowid")
    inserts = [s for s in statements if s.startswith("INSERT")]
    assert len(inserts) == 11  # the refused binding never ran: its statement went again
    assert back == rows  # read back as written, the surrogate too, in the order given


def test_a_refused_row_stores_none_of_the_batch(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        _table(store)
        rows = [(i, "x", 0.5) for i in range(1200)]
        rows[1100] = (2**70, "too big for SQLite's integer", 0.5)
        with pytest.raises(OverflowError), store._db.transaction():
            store._db.insert_rows(Insert("t", ("k", "a", "b"), rows))
        assert store._db.query("SELECT COUNT(*) FROM t") == [(0,)]


def test_a_statement_never_binds_more_values_than_sqlite_allows(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        _table(store)
        store._db._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)  # SQLite before 3.32
        rows = [(i, "x", 0.25) for i in range(2000)]
        with store._db.transaction():
            store._db.insert_rows(Insert("t", ("k", "a", "b"), rows))
        assert store._db.query("SELECT COUNT(*), SUM(k) FROM t") == [(2000, sum(range(2000)))]


@pytest.mark.parametrize(
    "fixed",
    [
        (("a", "it's 'quoted'"), ("b", None)),  # literals in the statement
        (("a", "beyond ASCII: é"), ("b", 0.1)),  # bound in every row (a float's text is not exact)
        (("a", "lone \ud800"), ("b", 2.5)),  # and stored as bytes, as a bound value is
    ],
)
def test_fixed_columns_store_what_binding_them_in_every_row_stores(
    tmp_path: Path, fixed: tuple[tuple[str, Any], ...]
) -> None:
    with Store(tmp_path / "runs.db") as store:
        _table(store)
        rows = [(i,) for i in range(700)]
        with store._db.transaction():
            store._db.insert_rows(Insert("t", ("k",), rows, fixed))
            store._db.insert_rows(Insert("t", ("k",), rows, fixed).expanded())
        got = store._db.query("SELECT k, a, b FROM t ORDER BY rowid")
    values = tuple(value for _, value in fixed)
    assert got == [(i, *values) for i in range(700)] * 2


def test_a_long_text_or_an_integer_beyond_64_bits_is_bound_not_written_as_a_literal(
    tmp_path: Path,
) -> None:
    """A literal is repeated in each row of a statement (a 2 MB run id made a statement over
    SQLite's size limit, on this path only), and SQLite reads an integer literal beyond 64
    bits as a float: both are bound, as in any other row (the integer refused loudly)."""
    long = "r" * (_sqlite.LITERAL_CHARS + 1)
    assert _sqlite._literal(long) is None and _sqlite._literal(2**63) is None
    assert _sqlite._literal(long[1:]) == f"'{long[1:]}'" and _sqlite._literal(-(2**63)) is not None
    with Store(tmp_path / "runs.db") as store:
        _table(store)
        with store._db.transaction():
            store._db.insert_rows(Insert("t", ("k",), [(1,), (2,)], (("a", long),)))
        assert store._db.query("SELECT k, a FROM t") == [(1, long), (2, long)]
        with pytest.raises(OverflowError), store._db.transaction():
            store._db.insert_rows(Insert("t", ("a",), [("x",)], (("k", 2**64),)))
