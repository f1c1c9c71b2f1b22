"""Opening a store's backend: SQLite or PostgreSQL, as its location says."""

from __future__ import annotations

from aieval.store._backend import Backend
from aieval.store._location import StoreLocation

__all__ = ["open_backend"]


def open_backend(location: StoreLocation, *, untrusted: bool = False) -> Backend:
    """A connection to the store at ``location`` (driver errors propagate). An ``untrusted``
    SQLite file (made by someone else) is opened read-only, its schema checked and each query
    timed (:mod:`aieval.store._untrusted`); a PostgreSQL database is a server the eval's author
    named, opened as usual."""
    if location.is_sqlite and untrusted:
        from aieval.store._untrusted import UntrustedSqliteBackend

        return UntrustedSqliteBackend(location)
    if location.is_sqlite:
        from aieval.store._sqlite import SqliteBackend

        return SqliteBackend(location)
    from aieval.store._postgres import PostgresBackend

    return PostgresBackend(location)
