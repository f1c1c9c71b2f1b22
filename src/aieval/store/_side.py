"""A side table in a store's database: the response and embedding caches live beside the runs.

The table is in whichever database the location names (an SQLite file, ``":memory:"``, or a
PostgreSQL database, so a team's CI jobs share one cache), created on first use; the
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
from aieval.store._location import StoreLocation, parse_location
from aieval.store._open import open_backend

__all__ = ["SideTable"]

T = TypeVar("T")


class SideTable:
    """One table (``ddl``) at ``location``, named ``label`` in errors ("the response cache")."""

    def __init__(
        self, location: str | os.PathLike[str] | StoreLocation, ddl: str, label: str
    ) -> None:
        self.location = parse_location(location)
        self._ddl = ddl
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
                db.create_table(self._ddl)
            except Exception as exc:
                db.close()
                raise self._error("open", exc) from exc
            self._db = db
        return self._db

    def _error(self, action: str, exc: BaseException) -> StoreError:
        why = self.location.scrub(str(exc))
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
                raise self._error(action, exc) from exc

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
                raise self._error(action, exc) from exc

    def execute(self, sql: str, args: Sequence[Any] = (), *, action: str = "write") -> None:
        """Run one statement, committed."""
        self._twice(lambda db: db.execute(sql, args), action)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement over ``rows``, committed together."""

        def many(db: Backend) -> None:
            with db.transaction():
                db.executemany(sql, rows)

        self._twice(many, "write")

    def close(self) -> None:
        """Close the connection (the next use opens it again)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()
