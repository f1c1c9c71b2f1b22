"""The store's connection: opening its backend, bringing its schema up to date, reading, writing."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aieval.errors import StoreError
from aieval.store._backend import PAGE, Backend, PageSink
from aieval.store._errors import describe
from aieval.store._location import StoreLocation, default_location, parse_location
from aieval.store._open import open_backend
from aieval.store._schema import COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION

__all__ = ["Connection", "default_db_path", "placeholders"]


def default_db_path() -> Path:
    """``$AIEVAL_DB`` if set, else ``./aieval.db``, for an SQLite store.

    Raises:
        StoreError: ``$AIEVAL_DB`` names a PostgreSQL store (use
            :func:`~aieval.store.default_location`).
    """
    location = default_location()
    if location.path is None:
        raise StoreError(f"$AIEVAL_DB names a PostgreSQL store ({location}), not a file")
    return location.path


class Connection:
    """One store (SQLite file or PostgreSQL database), its lock, and the schema migrated in
    place on opening.

    ``untrusted=True`` opens an SQLite file someone else made (a downloaded baseline) to be
    read only: read-only, its schema refused unless it is aieval's, each query stopped after a
    time limit, never migrated in place (see :mod:`aieval.store._untrusted`).
    """

    def __init__(
        self,
        location: str | os.PathLike[str] | StoreLocation | None = None,
        *,
        untrusted: bool = False,
    ) -> None:
        self.location = default_location() if location is None else parse_location(location)
        self._lock = threading.RLock()
        self._beat_at = 0.0
        try:
            self._db: Backend = open_backend(self.location, untrusted=untrusted)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"cannot open the store at {self.location}: {self._why(exc)}") from exc
        try:
            self._db.create_schema(SCHEMA, COLUMNS_ADDED, SCHEMA_VERSION)
        except Exception as exc:
            error = StoreError(f"cannot open the store at {self.location}: {self._why(exc)}")
            self._db.close()
            raise error from exc

    @property
    def path(self) -> Path:
        """The SQLite file of this store.

        Raises:
            StoreError: the store is PostgreSQL (see :attr:`location`).
        """
        if self.location.path is None:
            raise StoreError(f"the store at {self.location} is PostgreSQL: it has no file path")
        return self.location.path

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def _why(self, exc: BaseException) -> str:
        """An error's message on one line, the location's password (if any) replaced."""
        db: Backend | None = getattr(self, "_db", None)  # absent when opening it failed
        return self.location.scrub(describe(exc, db.role if db is not None else None))

    def _failed(self, exc: BaseException, action: str = "write to") -> StoreError:
        return StoreError(f"cannot {action} the store at {self.location}: {self._why(exc)}")

    def _write(self, sql: str, args: Sequence[Any], *, idempotent: bool = False) -> None:
        """Run one write; an ``idempotent`` one is tried once more on a new connection when the
        connection was lost (see :meth:`Backend.lost`)."""
        with self._lock:
            try:
                try:
                    self._db.execute(sql, args)
                except self._db.errors as exc:
                    if not (idempotent and self._db.lost(exc)):
                        raise
                    self._db.execute(sql, args)
            except self._db.errors as exc:
                raise self._failed(exc) from exc

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query (the backend asks once more on a new connection when the connection
        was lost: see :meth:`Backend.query`)."""
        with self._lock:
            try:
                return self._db.query(sql, args)
            except self._db.errors as exc:
                raise self._failed(exc, "read") from exc

    def _read_pages(
        self, sql: str, args: Sequence[Any], consume: PageSink, size: int = PAGE
    ) -> None:
        """Give the rows of a query to ``consume`` a page at a time (see :meth:`Backend.pages`:
        texts as the driver returns them, decoded with ``self._db.text``)."""
        with self._lock:
            try:
                self._db.pages(sql, args, consume, size)
            except self._db.errors as exc:
                raise self._failed(exc, "read") from exc

    def _read_one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self._read(sql, args)
        return rows[0] if rows else None


def placeholders(n: int) -> str:
    """``n`` SQL parameter placeholders: ``?, ?, ...``."""
    return ", ".join("?" * n)
