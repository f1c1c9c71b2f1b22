"""A side table in a store's database: the response and embedding caches live beside the runs.

The table is in whichever database the location names (an SQLite file, ``":memory:"``, or a
PostgreSQL database, so a team's CI jobs share one cache). Its DDL is the store's
(:data:`~aieval.store._schema.SCHEMA`): a store creates it on its first open (so a role with
only data rights uses it); in a database that is no store, the cache creates its table alone. The
connection opens on first use and again after :meth:`SideTable.close`. The caches' statements
are reads and upserts, so one that meets a lost connection (a PostgreSQL restart, a network
cut) is tried once more on a new connection before it fails.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from aieval.errors import StoreError
from aieval.store._backend import Backend
from aieval.store._encoding import dumps
from aieval.store._errors import describe
from aieval.store._location import StoreLocation, parse_location
from aieval.store._open import open_backend
from aieval.store._schema import COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION, table_ddl

__all__ = ["MEMORY", "SideTable"]

#: The location of a side table held in memory only (SQLite's own name for it): a cache of a
#: run that asked for no store, which writes no file.
MEMORY = ":memory:"

T = TypeVar("T")


class SideTable:
    """The table ``table`` of the store's schema at ``location``, named ``label`` in errors
    ("the response cache")."""

    def __init__(
        self, location: str | os.PathLike[str] | StoreLocation, table: str, label: str
    ) -> None:
        self.location = parse_location(location)
        self._table = table
        self._label = label
        self._db: Backend | None = None
        self._lock = threading.Lock()

    def _open(self) -> Backend:
        if self._db is None:
            try:
                db = open_backend(self.location)
            except StoreError:
                raise
            except Exception as exc:
                raise self._error("open", exc) from exc
            try:
                if db.has_table("meta"):  # a store: its schema, checked and kept current
                    db.create_schema(SCHEMA, COLUMNS_ADDED, SCHEMA_VERSION)
                else:  # a cache's own file (or another program's): only this table
                    db.create_table(table_ddl(self._table))
            except Exception as exc:
                error = self._error("open", exc, db)
                db.close()
                raise error from exc
            self._db = db
        return self._db

    def _error(self, action: str, exc: BaseException, db: Backend | None = None) -> StoreError:
        why = self.location.scrub(describe(exc, db.role if db is not None else None))
        return StoreError(f"cannot {action} the {self._label} {self.location}: {why}")

    def query(self, sql: str, args: Sequence[Any] = (), *, action: str = "read") -> list[Any]:
        """The rows of ``sql`` (the backend asks once more after a lost connection)."""
        return self._once(lambda db: db.query(sql, args), action)

    def _once(self, step: Callable[[Backend], T], action: str) -> T:
        with self._lock:
            db = self._open()
            try:
                return step(db)
            except db.errors as exc:
                raise self._error(action, exc, db) from exc

    def _twice(self, step: Callable[[Backend], T], action: str) -> T:
        """``step`` (a write) on the connection, once more on a new one if the connection was
        lost."""
        with self._lock:
            db = self._open()
            try:
                try:
                    return step(db)
                except db.errors as exc:
                    if not db.lost(exc):
                        raise
                    return step(db)
            except db.errors as exc:
                raise self._error(action, exc, db) from exc

    def execute(self, sql: str, args: Sequence[Any] = (), *, action: str = "write") -> None:
        """Run one statement, committed."""
        self._twice(lambda db: db.execute(sql, args), action)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement over ``rows``, committed together."""

        def many(db: Backend) -> None:
            with db.transaction():
                db.executemany(sql, rows)

        self._twice(many, "write")

    @staticmethod
    def to_json(value: Any) -> str:
        """``value`` as the JSON text a column of the store keeps (any Python text included)."""
        return dumps(value)

    def close(self) -> None:
        """Close the connection (the next use opens it again)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()
