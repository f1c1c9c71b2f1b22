"""Opening a store's backend: SQLite or PostgreSQL, as its location says."""

from __future__ import annotations

from aieval.store._backend import Backend
from aieval.store._location import StoreLocation

__all__ = ["open_backend"]


def open_backend(location: StoreLocation) -> Backend:
    """A connection to the store at ``location`` (driver errors propagate)."""
    if location.is_sqlite:
        from aieval.store._sqlite import SqliteBackend

        return SqliteBackend(location)
    from aieval.store._postgres import PostgresBackend

    return PostgresBackend(location)
