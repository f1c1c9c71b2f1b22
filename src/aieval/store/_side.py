"""A side table in a store's database: the response and embedding caches live beside the runs.

The table is in whichever database the location names (an SQLite file, ``":memory:"``, or a
PostgreSQL database, so a team's CI jobs share one cache), created on first use; the
connection opens on first use and again after :meth:`SideTable.close`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from aieval.errors import StoreError
from aieval.store._backend import Backend
from aieval.store._location import StoreLocation, parse_location
from aieval.store._open import open_backend

__all__ = ["SideTable"]


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
        """The rows of ``sql``."""
        with self._lock:
            db = self._open()
            try:
                return db.query(sql, args)
            except db.errors as exc:
                raise self._error(action, exc) from exc

    def execute(self, sql: str, args: Sequence[Any] = (), *, action: str = "write") -> None:
        """Run one statement, committed."""
        with self._lock:
            db = self._open()
            try:
                db.execute(sql, args)
            except db.errors as exc:
                raise self._error(action, exc) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement over ``rows``, committed together."""
        with self._lock:
            db = self._open()
            try:
                with db.transaction():
                    db.executemany(sql, rows)
            except db.errors as exc:
                raise self._error("write", exc) from exc

    def close(self) -> None:
        """Close the connection (the next use opens it again)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()
