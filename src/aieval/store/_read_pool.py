"""Pooled connections to a store, shared by a server's threads.

A store's :class:`~aieval.store.Store` holds one connection behind a lock; a server's table
reads and its received traces go through a few long-lived connections of their own instead
(on PostgreSQL a new connection costs a handshake and an authentication per request), so a
report being built on the store's connection does not hold them up. A connection that fails
is dropped, and a read on a reused one that fails (the database restarted) is tried once more
on a new connection.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

from aieval.errors import StoreError
from aieval.store._backend import Backend
from aieval.store._location import StoreLocation
from aieval.store._open import open_backend

__all__ = ["READ_POOL", "ReadPool", "pooled"]

T = TypeVar("T")


class ReadPool:
    """At most ``size`` connections per store, each used by one thread at a time.

    A use takes an idle connection, or opens one while fewer than ``size`` are open, or waits
    (at most ``wait_s``) for one to be given back; a connection whose use failed is closed,
    not given back. :attr:`opened` counts the connections ever opened.
    """

    def __init__(self, size: int = 6, wait_s: float = 120.0) -> None:
        self.size = size
        self.wait_s = wait_s
        self.opened = 0
        self._idle: dict[str, list[Backend]] = {}
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def read(
        self, location: StoreLocation, action: Callable[[Backend], T], *, repeat: bool = True
    ) -> T:
        """``action`` on a pooled connection; if that connection was reused and ``action``
        fails (a restarted database closed it), once more on a new one when ``repeat`` (reads
        can be repeated; a write, whose first try may have been committed, is not)."""
        key = _key(location)
        with self._lock:
            slots = self._slots.setdefault(key, threading.BoundedSemaphore(self.size))
        if not slots.acquire(timeout=self.wait_s):
            raise StoreError(
                f"cannot {'read' if repeat else 'write to'} the store at {location}: its"
                f" {self.size} {'read ' if repeat else ''}connections stayed busy for"
                f" {self.wait_s:.0f} s"
            )
        try:
            with self._lock:
                idle = self._idle.get(key)
                db = idle.pop() if idle else None
            if db is not None:
                try:
                    return self._use(key, db, action)
                except db.errors:
                    self.clear(location)  # the others were most likely closed with it
                    if not repeat:
                        raise
            return self._use(key, self._open(location), action)
        finally:
            slots.release()

    def _use(self, key: str, db: Backend, action: Callable[[Backend], T]) -> T:
        try:
            result = action(db)
        except BaseException:
            with contextlib.suppress(*db.errors):
                db.close()
            raise
        with self._lock:
            self._idle.setdefault(key, []).append(db)
        return result

    def _open(self, location: StoreLocation) -> Backend:
        db = open_backend(location)
        with self._lock:
            self.opened += 1
        return db

    def clear(self, location: StoreLocation | None = None) -> None:
        """Close the idle connections to ``location`` (every store's when None)."""
        with self._lock:
            if location is None:
                dropped = [db for idle in self._idle.values() for db in idle]
                self._idle.clear()
            else:
                dropped = self._idle.pop(_key(location), [])
        for db in dropped:
            with contextlib.suppress(*db.errors):
                db.close()


#: The process's pooled connections (a server's table reads and received traces).
READ_POOL = ReadPool()


def _key(location: StoreLocation) -> str:
    return location.connect_url() if location.path is None else str(location.path)


def pooled(
    location: StoreLocation,
    action: Callable[[Backend], T],
    pool: ReadPool | None = None,
    *,
    repeat: bool = True,
) -> T:
    """``action`` on a connection of ``pool`` (:data:`READ_POOL` when None) to the store, its
    failures as :class:`StoreError` naming the location (its password masked)."""
    try:
        return (READ_POOL if pool is None else pool).read(location, action, repeat=repeat)
    except StoreError:
        raise
    except Exception as exc:
        verb = "read" if repeat else "write to"
        raise StoreError(
            f"cannot {verb} the store at {location}: {location.scrub(str(exc))}"
        ) from exc
