"""The store's backend seam: one SQL text, run on SQLite or PostgreSQL.

The store's SQL is written once, in SQLite's spelling with ``?`` placeholders; a backend runs
it, translated where the two differ (:mod:`aieval.store._sqlite`, :mod:`aieval.store._postgres`):
placeholders, insertion order (SQLite's ``rowid``, a ``seq`` column on PostgreSQL), "no limit",
column types, taking a row for update, schema introspection and lossless text. Rows come back
with every text exactly as it was written.

A backend raises its driver's own errors (:attr:`Backend.errors`); the store turns them into
:class:`~aieval.errors.StoreError` naming the redacted location.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from aieval.store._location import StoreLocation

__all__ = ["PAGE", "Backend", "Insert", "PageSink"]

#: Rows a bulk read hands over at a time.
PAGE = 65536
#: What takes a page of rows (texts as the driver returns them).
PageSink = Callable[[list[tuple[Any, ...]]], None]
#: run one statement in the current transaction (what :meth:`Backend.write_rows` gives ``after``)
Execute = Callable[[str, Sequence[Any]], None]


@dataclass(frozen=True)
class Insert:
    """Rows for one table: ``rows`` hold the values of ``columns``, in order, and each row
    also holds the value of each of the ``fixed`` columns (one value for every row, given
    once)."""

    table: str
    columns: tuple[str, ...]
    rows: Sequence[Sequence[Any]]
    fixed: tuple[tuple[str, Any], ...] = ()

    def expanded(self) -> Insert:
        """The same rows with the fixed columns' values in each (after the others)."""
        if not self.fixed:
            return self
        names = tuple(name for name, _ in self.fixed)
        tail = tuple(value for _, value in self.fixed)
        return Insert(self.table, (*self.columns, *names), [(*row, *tail) for row in self.rows])


class Backend(ABC):
    """One connection to a store's database (not thread-safe: the store holds a lock)."""

    #: the driver's error classes
    errors: tuple[type[BaseException], ...]
    #: the LIMIT value that means "no limit"
    no_limit: int | None
    #: appended to a SELECT that takes the rows it reads for the transaction (the take-over)
    for_update: str
    #: a statement locking one run id (its one parameter) until the transaction ends, for a run
    #: whose row may not exist yet (a row lock locks no absent row); empty: the transaction's
    #: own lock suffices (SQLite's exclusive transaction)
    run_lock: str = ""
    #: how many values :meth:`member_of` is given at most (SQLite binds each one)
    max_members: int = 500

    def __init__(self, location: StoreLocation) -> None:
        self.location = location

    @abstractmethod
    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """All rows of ``sql``, texts decoded. Outside a transaction, a read whose connection
        was lost is asked once more on a new one, here and only here (callers do not retry
        reads)."""

    def pages(self, sql: str, args: Sequence[Any], consume: PageSink, size: int = PAGE) -> None:
        """Give the rows of ``sql`` to ``consume`` in pages of at most ``size`` rows, as the
        driver returns them: a text may still be encoded (:meth:`text` decodes it). Only the
        current page is held; a bulk read keeps what it needs of each page in arrays."""
        rows = self.query(sql, args)
        for start in range(0, len(rows), size):
            consume(rows[start : start + size])

    def text(self, value: Any) -> Any:
        """A text value of a page of :meth:`pages`, decoded (other values unchanged)."""
        return value

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of ``sql`` or ``None``."""
        rows = self.query(sql, args)
        return rows[0] if rows else None

    def member_of(self, column: str, values: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
        """SQL testing whether ``column`` is one of ``values``, and its parameters."""
        return f"{column} IN ({', '.join('?' * len(values))})", tuple(values)

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        """Run one statement (committed at once outside :meth:`transaction`)."""

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement over many rows, in one batch."""

    def insert_rows(self, insert: Insert) -> None:
        """Insert every row of ``insert``, inside the transaction the caller holds."""
        insert = insert.expanded()
        if insert.rows:
            self.executemany(
                f"INSERT INTO {insert.table} ({', '.join(insert.columns)})"
                f" VALUES ({', '.join('?' * len(insert.columns))})",
                insert.rows,
            )

    def write_rows(
        self,
        inserts: Sequence[Insert],
        then: tuple[str, Sequence[Any]] | None = None,
        after: Callable[[Execute], None] | None = None,
    ) -> None:
        """Insert every row of ``inserts`` (in order) and run the statement ``then``, then
        ``after`` (a run's rollups) given this transaction's ``execute``, all in one committed
        transaction: all of it is stored or none of it."""
        with self.transaction():
            for insert in inserts:
                self.insert_rows(insert)
            if then is not None:
                self.execute(*then)
            if after is not None:
                after(self.execute)

    def refresh_statistics(self, tables: Sequence[str]) -> None:
        """Let the query planner see ``tables`` as they are now, where its statistics of them
        are far off (PostgreSQL); SQLite plans without them."""
        return None

    @property
    def role(self) -> str | None:
        """The database user this connection acts as (named in permission errors), if any."""
        return None

    def lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` was the connection being lost (the next use connects again)."""
        return False

    def bad_value(self, exc: BaseException) -> bool:
        """Whether ``exc`` was a value the store cannot keep (an integer beyond 64 bits), not
        a failure of the store itself."""
        return isinstance(exc, OverflowError)

    @abstractmethod
    def transaction(self, *, exclusive: bool = False) -> AbstractContextManager[None]:
        """A transaction: committed on leaving, rolled back on an exception. ``exclusive``
        takes SQLite's write lock at once (PostgreSQL locks the rows read ``for_update``)."""

    @abstractmethod
    def create_schema(self, schema: str, added: dict[str, dict[str, str]], version: int) -> None:
        """Create the tables of ``schema`` if absent, add the ``added`` columns an older store
        lacks, and record ``version`` in ``meta``: all at once, safe against a concurrent
        opener."""

    @abstractmethod
    def has_table(self, name: str) -> bool:
        """Whether the database holds the table ``name``."""

    @abstractmethod
    def create_table(self, ddl: str) -> None:
        """Run one ``CREATE TABLE IF NOT EXISTS`` of :data:`~aieval.store._schema.SCHEMA`
        (SQLite's types), safe against a concurrent opener: a cache's table in a database that
        is not a store."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""
