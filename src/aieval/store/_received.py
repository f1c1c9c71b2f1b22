"""The OTLP export requests a server received, kept losslessly in the run store.

Each request's body is kept as it arrived (protobuf, or OTLP/JSON) in ``received_requests``,
and the traces it holds (with their span counts) in ``received_traces``, keyed by trace id:
on either backend, so a PostgreSQL team server keeps its traces in PostgreSQL. Decoding a body
into spans is the server's (this package knows nothing of OTLP).

Before schema version 6 a server kept them in an SQLite file of its own (see
:func:`earlier_trace_file`); :meth:`ReceivedTraces.import_file` copies such a file's requests
into the store once, each with its arrival time, and records in ``meta`` how far it read, so
a restart copies nothing twice and nothing stored is lost.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from aieval.errors import StoreError
from aieval.store._backend import Backend
from aieval.store._location import StoreLocation
from aieval.store._read_pool import ReadPool, pooled

__all__ = ["ReceivedRequest", "ReceivedTraces", "StoredTrace", "earlier_trace_file"]

T = TypeVar("T")

#: ``meta`` key prefix recording, per host and file, the last request of an earlier trace file
#: copied into the store
_IMPORTED = "received_traces_file:"


@dataclass(frozen=True, slots=True)
class StoredTrace:
    """One trace as stored: its id, spans received, export requests, first and last arrival."""

    trace_id: str
    spans: int
    requests: int
    first_received: float
    last_received: float


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One export request as it arrived: its body in ``format`` (``protobuf`` or ``json``)."""

    id: int
    received: float
    format: str
    body: bytes


def earlier_trace_file(location: StoreLocation) -> Path:
    """The file where aieval before schema version 6 kept the received traces of the store at
    ``location``: ``<store>.traces.db`` beside an SQLite store; for a PostgreSQL store,
    ``$AIEVAL_TRACES_DB`` (default ``./aieval-traces.db``)."""
    beside = location.sibling(".traces.db")
    if beside is not None:
        return beside
    return Path(os.environ.get("AIEVAL_TRACES_DB") or "aieval-traces.db")


class ReceivedTraces:
    """The export requests received into the store at ``location`` (opened, and so migrated,
    by a :class:`~aieval.store.Store` first), on connections of ``pool`` (the process's
    :data:`~aieval.store.READ_POOL` when None). A failure is a
    :class:`~aieval.errors.StoreError` naming the location (its password masked)."""

    def __init__(self, location: StoreLocation, pool: ReadPool | None = None) -> None:
        self.location = location
        self.pool = pool

    def _read(self, action: Callable[[Backend], T]) -> T:
        return pooled(self.location, action, self.pool)

    def _write(self, action: Callable[[Backend], T]) -> T:
        return pooled(self.location, action, self.pool, repeat=False)

    def add(
        self, body: bytes, fmt: str, counts: Mapping[str, int], received: float | None = None
    ) -> int:
        """Keep one request (arrived at ``received``, now when None), holding ``counts``
        spans per trace id; answer how many spans in all."""
        at = time.time() if received is None else received
        self._write(partial(_insert, received=at, fmt=fmt, body=body, counts=counts))
        return sum(counts.values())

    def traces(self) -> list[StoredTrace]:
        """Every stored trace, oldest first."""
        query = """SELECT t.trace_id, SUM(t.spans), COUNT(*), MIN(r.received), MAX(r.received)
                   FROM received_traces t JOIN received_requests r ON r.id = t.request_id
                   GROUP BY t.trace_id ORDER BY MIN(r.id)"""
        rows = self._read(lambda db: db.query(query))
        return [StoredTrace(str(t), int(s), int(n), float(a), float(b)) for t, s, n, a, b in rows]

    def size(self, trace_ids: Iterable[str] | None = None) -> tuple[int, int]:
        """``(traces, spans)`` stored for ``trace_ids`` (all traces when ``None``)."""
        query = "SELECT COUNT(DISTINCT trace_id), COALESCE(SUM(spans), 0) FROM received_traces"

        def read(db: Backend) -> list[tuple[Any, ...]]:
            if trace_ids is None:
                return db.query(query)
            found = []
            for chunk in _chunks(sorted(set(trace_ids)), db.max_members):
                where, args = db.member_of("trace_id", chunk)
                found += db.query(f"{query} WHERE {where}", args)
            return found

        rows = self._read(read)
        return sum(int(t) for t, _ in rows), sum(int(s) for _, s in rows)

    def request_ids(self, trace_ids: Iterable[str] | None = None) -> list[int]:
        """The ids of the requests holding spans of ``trace_ids`` (all when ``None``), in
        arrival order."""
        wanted = None if trace_ids is None else sorted(set(trace_ids))

        def read(db: Backend) -> list[int]:
            if wanted is None:
                return [int(i) for (i,) in db.query("SELECT id FROM received_requests ORDER BY id")]
            found: set[int] = set()
            for chunk in _chunks(wanted, db.max_members):
                where, args = db.member_of("trace_id", chunk)
                sql = f"SELECT request_id FROM received_traces WHERE {where}"
                found.update(int(i) for (i,) in db.query(sql, args))
            return sorted(found)

        return self._read(read)

    def request(self, request_id: int) -> ReceivedRequest | None:
        """The request ``request_id`` with its body as it arrived (``None``: no such request)."""
        found: list[tuple[Any, ...]] = []

        def read(db: Backend) -> None:
            # pages hand the body over as the driver returns it: the bytes that arrived
            sql = "SELECT id, received, format, body FROM received_requests WHERE id = ?"
            db.pages(sql, (request_id,), found.extend, 1)
            if found:
                found[0] = (*found[0][:2], db.text(found[0][2]), found[0][3])

        self._read(read)
        if not found:
            return None
        ident, received, fmt, body = found[0]
        return ReceivedRequest(int(ident), float(received), str(fmt), bytes(body))

    def import_file(self, path: Path) -> int:
        """Copy into the store the requests of ``path``, a trace file of an earlier aieval
        (see :func:`earlier_trace_file`), that are not in it yet: one transaction per request,
        each recording in ``meta`` that it was copied. Answer how many were copied (0 when
        there is no such file).

        Raises:
            StoreError: the file is not such a trace file, or the store cannot be written.
        """
        if not path.is_file():
            return 0
        key = f"{_IMPORTED}{socket.gethostname()}:{path.resolve()}"
        row = self._read(lambda db: db.one("SELECT value FROM meta WHERE key = ?", (key,)))
        done = int(row[0]) if row is not None else 0
        try:
            source = sqlite3.connect(path, timeout=30)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the received traces in {path}: {exc}") from exc
        copied = 0
        try:
            while True:
                try:
                    found = source.execute(
                        "SELECT id, received, format, body FROM requests WHERE id > ?"
                        " ORDER BY id LIMIT 1",
                        (done,),
                    ).fetchone()
                    if found is None:
                        return copied
                    counts = dict(
                        source.execute(
                            "SELECT trace_id, spans FROM request_traces WHERE request_id = ?",
                            (found[0],),
                        ).fetchall()
                    )
                except sqlite3.Error as exc:
                    raise StoreError(
                        f"cannot read the received traces in {path} (a trace file of an earlier"
                        f" aieval): {exc}"
                    ) from exc
                done, received, fmt, body = found
                mark = (key, str(done))
                self._write(
                    partial(
                        _insert,
                        received=received,
                        fmt=fmt,
                        body=bytes(body),
                        counts=counts,
                        mark=mark,
                    )
                )
                copied += 1
        finally:
            source.close()


def _insert(
    db: Backend,
    *,
    received: float,
    fmt: str,
    body: bytes,
    counts: Mapping[str, int],
    mark: tuple[str, str] | None = None,
) -> None:
    """One request and its traces in one transaction (with the ``meta`` row ``mark``)."""
    with db.transaction(exclusive=True):
        row = db.one(
            "INSERT INTO received_requests (received, format, body) VALUES (?, ?, ?) RETURNING id",
            (received, fmt, body),
        )
        assert row is not None
        request_id = int(row[0])
        if counts:
            db.executemany(
                "INSERT INTO received_traces (trace_id, request_id, spans) VALUES (?, ?, ?)",
                [(trace, request_id, spans) for trace, spans in counts.items()],
            )
        if mark is not None:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                mark,
            )


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
