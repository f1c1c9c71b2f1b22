"""The values of a store aieval did not create, checked before any is read: each of the right
type, so that no reader meets a value it cannot decode.

aieval writes a number as a number, a text as text (or, when UTF-8 cannot hold it, as its
``surrogatepass`` bytes, see :mod:`aieval.store._encoding`) and a JSON column as JSON text. A
file made elsewhere may hold anything in any column (SQLite does not enforce types); each
column of :data:`~aieval.store._schema.SCHEMA` is checked here, NULL only where aieval's own
schema allows it, and the first value that is not what aieval writes is an
:class:`~aieval.errors.UntrustedStoreError` naming the file, the table, the row (its key) and
the column.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval.errors import UntrustedStoreError
from aieval.store._schema import COLUMNS_ADDED, SCHEMA

__all__ = ["check_values"]

#: The JSON columns, by table; ``True``: the readers expect an object (or JSON ``null``).
_JSON: dict[str, dict[str, bool]] = {
    "runs": {"config": True, "metrics": True},
    "samples": {
        "input": False,
        "expected": False,
        "metadata": True,
        "extra": True,
        "verdict": True,
    },
    "scores": {"raw": False, "metadata": True},
    "judge_calibrations": {"metrics": True},
}
#: The columns naming a row of each table in an error (its rowid where it has none).
_KEYS = {
    "meta": ("key",),
    "runs": ("id",),
    "samples": ("run_id", "sample_id"),
    "scores": ("run_id", "sample_id", "scorer"),
    "model_calls": ("run_id", "sample_id", "id"),
    "judge_calibrations": ("id",),
    "judge_certificates": ("id",),
    "response_cache": ("key",),
    "embedding_cache": ("key",),
    "received_requests": ("id",),
    "received_traces": ("trace_id", "request_id"),
}
_TYPES = {
    "INTEGER": ("integer",),
    "REAL": ("integer", "real"),
    "TEXT": ("text", "blob"),
    "BLOB": ("blob",),
}


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    kind: str  # INTEGER, REAL, TEXT or JSON
    nullable: bool
    obj: bool = False  # JSON: an object or null


#: Stops the queries run inside after the time limit of one query (see ``_untrusted``).
Limit = Callable[[], AbstractContextManager[None]]


def check_values(db: sqlite3.Connection, path: Path, limit: Limit) -> None:
    """Refuse the first value of the store on ``db`` that aieval would not have written
    (each table's and column's scan its own query, run inside ``limit()``).

    Raises:
        UntrustedStoreError: naming ``path``, the table, the row and the column, and what it holds.
    """
    present = {
        str(name) for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    for table, columns in _columns().items():
        if table not in present:
            continue
        have = {str(row[1]) for row in db.execute(f'PRAGMA table_info("{table}")')}
        _check_table(db, path, table, [c for c in columns if c.name in have], limit)


def _check_table(
    db: sqlite3.Connection, path: Path, table: str, columns: list[_Column], limit: Limit
) -> None:
    keys = ", ".join(f'"{k}"' for k in _KEYS.get(table, ())) or "rowid"
    # the types, in SQL: only rows with a wrong one reach Python
    wrong = " OR ".join(_wrong_type(c) for c in columns)
    with limit():
        row = db.execute(f'SELECT {keys} FROM "{table}" WHERE {wrong} LIMIT 1').fetchone()
    if row is not None:
        for column in columns:
            sql = f'SELECT typeof("{column.name}") FROM "{table}" WHERE {_wrong_type(column)}'
            with limit():
                found = db.execute(f"{sql} LIMIT 1").fetchone()
            if found is not None:
                what = "NULL" if found[0] == "null" else f"a value of type {found[0]}"
                _refuse(
                    path, table, row, column, f"holds {what}, where aieval writes {column.kind}"
                )
    # texts stored as bytes (a string UTF-8 cannot hold) must decode as aieval encoded them
    for column in columns:
        if column.kind != "TEXT":
            continue
        sql = f'SELECT {keys}, "{column.name}" FROM "{table}" WHERE typeof("{column.name}") = ?'
        with limit():
            for *key, value in _rows(db, sql, ("blob",)):
                try:
                    bytes(value).decode("utf-8", "surrogatepass")
                except UnicodeDecodeError as exc:
                    why = f"holds bytes that are not text ({exc.reason})"
                    _refuse(path, table, key, column, why)
    for column in columns:
        if column.kind == "JSON":
            sql = f'SELECT {keys}, "{column.name}" FROM "{table}" WHERE "{column.name}" NOT NULL'
            with limit():
                for *key, value in _rows(db, sql):
                    _check_json(path, table, key, column, value)


def _check_json(path: Path, table: str, key: list[Any], column: _Column, text: str) -> None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        _refuse(path, table, key, column, f"is not JSON ({_short(exc)})")
    if column.obj and value is not None and not isinstance(value, dict):
        _refuse(path, table, key, column, f"holds JSON {type(value).__name__}, not an object")


def _rows(db: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> Iterator[Any]:
    cursor = db.cursor()
    cursor.row_factory = None  # the values as stored: bytes stay bytes
    yield from cursor.execute(sql, args)


def _wrong_type(column: _Column) -> str:
    allowed = ("text",) if column.kind == "JSON" else _TYPES[column.kind]
    if column.nullable:
        allowed = (*allowed, "null")
    return f'typeof("{column.name}") NOT IN ({", ".join(repr(t) for t in allowed)})'


def _refuse(path: Path, table: str, key: Any, column: _Column, problem: str) -> Any:
    names = _KEYS.get(table, ("rowid",))
    row = ", ".join(f"{n} {_shown(v)}" for n, v in zip(names, key, strict=False))
    raise UntrustedStoreError(
        f"{path} is not a store aieval wrote: in table {table!r}, row {row}, column "
        f"{column.name!r} {problem}. A store made elsewhere is read only when its values are "
        "the ones aieval writes; make the baseline with `aieval run`"
    )


def _shown(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _short(exc: BaseException) -> str:
    return type(exc).__name__ if isinstance(exc, RecursionError) else str(exc)[:200]


@functools.cache
def _columns() -> dict[str, tuple[_Column, ...]]:
    """Each table's columns as aieval's schema declares them (with every one added since)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        out: dict[str, tuple[_Column, ...]] = {}
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            json_columns = _JSON.get(table, {})
            columns = []
            for _, name, declared, notnull, _default, pk in db.execute(
                f'PRAGMA table_info("{table}")'
            ):
                kind = "JSON" if name in json_columns else str(declared).upper()
                # a key is never NULL in a store aieval wrote; a column added since version 1
                # is NULL in rows stored before
                nullable = not notnull and not pk
                nullable = nullable or name in COLUMNS_ADDED.get(table, {})
                columns.append(_Column(name, kind, nullable, json_columns.get(name, False)))
            out[table] = tuple(columns)
    finally:
        db.close()
    return out
