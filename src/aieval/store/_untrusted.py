"""An SQLite store file that someone else made (a CI artifact, a download), opened to be read
and nothing more.

Such a file is data, never code: its schema could hold a view that runs an endless recursive
query when the store reads ``scores``, a trigger, or a generated column. So the file is opened
read-only (``mode=ro``, and ``immutable`` unless a write-ahead log lies beside it: no lock,
nothing written beside it) with
``query_only`` and ``trusted_schema`` off, every query is stopped after a time limit
(``set_progress_handler``), and before anything is read its schema must be aieval's own: every
object in ``sqlite_master`` is a table or an index of :data:`~aieval.store._schema.SCHEMA`
(with those tables' own columns, none generated) or SQLite's index of a primary key. Anything
else (a view, a trigger, a virtual table, another table or index) is a :class:`StoreError`
naming the file and the object.

A store at an older schema version is read from a private copy, migrated there as aieval
migrates its own stores (its schema checked first, so the migration runs only aieval's DDL).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aieval.errors import StoreError
from aieval.store._encoding import row_from_db
from aieval.store._location import StoreLocation
from aieval.store._schema import COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION, up_to_date
from aieval.store._sqlite import SqliteBackend

__all__ = ["UNTRUSTED_QUERY_SECONDS", "UntrustedSqliteBackend"]

#: How long one query on a store aieval did not create may run (a page of a long read counts
#: as one query): far more than any query of a store aieval wrote needs.
UNTRUSTED_QUERY_SECONDS = 20.0
# SQLite's virtual machine steps between two looks at the clock
_STEPS = 10_000


class UntrustedSqliteBackend(SqliteBackend):
    """A read-only connection to an SQLite store file aieval did not create: its schema checked
    on opening, each query stopped after ``seconds``; every write is refused."""

    def __init__(
        self, location: StoreLocation, *, seconds: float = UNTRUSTED_QUERY_SECONDS
    ) -> None:
        assert location.path is not None
        self.location = location
        self._seconds = seconds
        self._deadline = math.inf
        self._copy: Path | None = None
        path = location.path
        if not path.is_file():
            raise StoreError(f"no store at {path}: a baseline store must be an existing file")
        # immutable: no lock and no -shm file made beside it; but a write-ahead log beside it
        # (a writer still has it open) holds part of the store, which only a plain read-only
        # connection reads
        wal = location.sibling("-wal")
        mode = (
            "ro" if wal is not None and wal.is_file() and wal.stat().st_size else "ro&immutable=1"
        )
        self._db = _connect(f"file:{quote(str(path.resolve()))}?mode={mode}", uri=True)
        try:
            self._guard()
            with self._limit():
                check_schema(self._db, path)
            try:
                current = up_to_date(self._version(), SCHEMA_VERSION)
            except StoreError as exc:
                raise StoreError(f"{path}: {exc}") from None
            if not current:
                self._migrated_copy()
            self._db.execute("PRAGMA query_only=ON")
        except BaseException:
            self.close()
            raise
        self._db.row_factory = row_from_db

    def _guard(self) -> None:
        self._db.execute("PRAGMA trusted_schema=OFF")
        self._db.execute("PRAGMA cell_size_check=ON")  # a corrupt page is an error, early
        self._db.set_progress_handler(self._expired, _STEPS)

    def _expired(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def _version(self) -> str | None:
        with self._limit():
            try:
                sql = "SELECT value FROM meta WHERE key = 'schema_version'"
                row = self._db.execute(sql).fetchone()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                row = None  # no meta table: not a store
        if row is None:
            raise StoreError(f"{self.location.path} is not an aieval store: it records no version")
        return str(row[0])

    def _migrated_copy(self) -> None:
        """Read from a private copy brought to this version (the original is never written)."""
        fd, name = tempfile.mkstemp(prefix="aieval-baseline-", suffix=".db")
        os.close(fd)
        self._copy = Path(name)
        copy = _connect(str(self._copy))
        try:
            with self._limit():
                self._db.backup(copy)
        except BaseException:
            copy.close()
            raise
        self._db.close()
        self._db = copy
        self._guard()
        with self._limit():
            SqliteBackend.create_schema(self, SCHEMA, COLUMNS_ADDED, SCHEMA_VERSION)

    @contextlib.contextmanager
    def _limit(self) -> Iterator[None]:
        """Stop the statements run inside after ``seconds``, with an error saying so."""
        self._deadline = time.monotonic() + self._seconds
        try:
            yield
        except sqlite3.OperationalError as exc:
            if time.monotonic() <= self._deadline:
                raise
            raise sqlite3.OperationalError(
                f"a query ran over {self._seconds:g} s, the limit on a store aieval did not "
                f"create ({self.location.path}); is it a store `aieval run` wrote?"
            ) from exc
        finally:
            self._deadline = math.inf

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._limit():
            return super().query(sql, args)

    def pages(
        self,
        sql: str,
        args: Sequence[Any],
        consume: Callable[[list[tuple[Any, ...]]], None],
        size: int = 65536,
    ) -> None:
        def limited(page: list[tuple[Any, ...]]) -> None:
            consume(page)
            self._deadline = time.monotonic() + self._seconds  # the next page's own time

        with self._limit():
            super().pages(sql, args, limited, size)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        raise sqlite3.OperationalError(f"{self.location.path} is opened read-only")

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise sqlite3.OperationalError(f"{self.location.path} is opened read-only")

    def create_schema(self, schema: str, added: dict[str, dict[str, str]], version: int) -> None:
        """Nothing: the schema was checked on opening, and this store is never written."""

    def create_table(self, ddl: str) -> None:
        raise sqlite3.OperationalError(f"{self.location.path} is opened read-only")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        if self._copy is not None:
            self._copy.unlink(missing_ok=True)


def check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a schema that is not aieval's: a view, a trigger, a virtual table, a table or
    index aieval does not create, a column it does not know, or a generated one.

    Raises:
        StoreError: naming ``path`` and the first object that is not aieval's.
    """
    tables, indexes = _reference()
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    for kind, name, table, sql in rows:
        problem = _problem(db, str(kind), str(name), str(table), sql, tables, indexes)
        if problem is not None:
            raise StoreError(
                f"{path} is not a store aieval wrote: {problem}. A store made elsewhere is "
                "read only when it holds aieval's own tables and indexes; make the baseline "
                "with `aieval run` (or `aieval push` it to a fresh store)"
            )


def _problem(
    db: sqlite3.Connection,
    kind: str,
    name: str,
    table: str,
    sql: Any,
    tables: dict[str, frozenset[str]],
    indexes: dict[str, str],
) -> str | None:
    shown = f"{kind} {name!r}"
    if kind == "table":
        if name not in tables:
            return f"it holds {shown}, which aieval does not create"
        if not isinstance(sql, str) or not sql.lstrip().upper().startswith("CREATE TABLE"):
            return f"its {shown} is not a plain table"
        for column in db.execute(f'PRAGMA table_xinfo("{name}")').fetchall():
            if column[1] not in tables[name]:
                return f"its {shown} has a column {column[1]!r} that aieval does not create"
            if column[6]:
                return f"its {shown} has a generated or hidden column {column[1]!r}"
        return None
    if kind == "index":
        if sql is None and name.startswith(f"sqlite_autoindex_{table}_") and table in tables:
            return None  # SQLite's own index of a primary key or a unique column
        if indexes.get(name) != _normal(sql):
            return f"it holds {shown}, which aieval does not create as it is"
        return None
    return f"it holds {shown}: aieval stores have no {kind}s"


@functools.cache
def _reference() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    """aieval's tables (with every column any version had) and its indexes' SQL."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        tables = {}
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = {row[1] for row in db.execute(f'PRAGMA table_xinfo("{name}")')}
            tables[name] = frozenset(columns | set(COLUMNS_ADDED.get(name, {})))
        indexes = {
            name: _normal(sql)
            for name, sql in db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
    finally:
        db.close()
    return tables, indexes


def _normal(sql: Any) -> str:
    return " ".join(str(sql).split()) if isinstance(sql, str) else ""


def _connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(target, uri=uri, check_same_thread=False, isolation_level=None)
