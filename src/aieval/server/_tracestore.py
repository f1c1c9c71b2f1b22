"""The spans ``POST /v1/traces`` received, kept losslessly: each export request's body as it
arrived (protobuf, or OTLP/JSON), indexed by the trace ids it holds, in a SQLite file beside
the run store (``<store>.traces.db``)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the traces extra is needed only when traces arrive
    from aieval.traces import Span

__all__ = ["StoredTrace", "TraceStore", "decode"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY, received REAL NOT NULL, format TEXT NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS request_traces (
    request_id INTEGER NOT NULL REFERENCES requests(id), trace_id TEXT NOT NULL,
    spans INTEGER NOT NULL, PRIMARY KEY (trace_id, request_id));
"""


@dataclass(frozen=True, slots=True)
class StoredTrace:
    """One trace as stored: its id, spans received, export requests, first and last arrival."""

    trace_id: str
    spans: int
    requests: int
    first_received: float
    last_received: float


def decode(body: bytes, fmt: str) -> list[Span]:
    """The spans of one export request body (``fmt``: ``protobuf`` or ``json``).

    Raises:
        WorkflowError, ValueError, DecodeError: a body that is not an export request.
    """
    from aieval.traces import spans_from_bytes, spans_from_proto

    if fmt == "json":
        return list(spans_from_bytes(body, "request body"))
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return list(spans_from_proto(request))


class TraceStore:
    """Received export requests in ``path`` (created on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._ready = False

    def add(self, body: bytes, fmt: str, counts: Mapping[str, int]) -> int:
        """Keep one request, holding ``counts`` spans per trace id; answer how many in all."""
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO requests (received, format, body) VALUES (?, ?, ?)",
                (time.time(), fmt, body),
            )
            request_id = cursor.lastrowid
            db.executemany(
                "INSERT INTO request_traces VALUES (?, ?, ?)",
                [(request_id, t, n) for t, n in counts.items()],
            )
        return sum(counts.values())

    def traces(self) -> list[StoredTrace]:
        """Every stored trace, oldest first."""
        query = """SELECT t.trace_id, SUM(t.spans), COUNT(*), MIN(r.received), MAX(r.received)
                   FROM request_traces t JOIN requests r ON r.id = t.request_id
                   GROUP BY t.trace_id ORDER BY MIN(r.id)"""
        with self._connect() as db:
            return [StoredTrace(*row) for row in db.execute(query)]

    def size(self, trace_ids: Iterable[str] | None = None) -> tuple[int, int]:
        """``(traces, spans)`` stored for ``trace_ids`` (all traces when ``None``)."""
        query = "SELECT COUNT(DISTINCT trace_id), COALESCE(SUM(spans), 0) FROM request_traces"
        with self._connect() as db:
            if trace_ids is None:
                traces, spans = db.execute(query).fetchone()
                return int(traces), int(spans)
            found = [
                db.execute(f"{query} WHERE trace_id IN ({','.join('?' * len(c))})", c).fetchone()
                for c in _chunks(sorted(set(trace_ids)))
            ]
        return sum(int(t) for t, _ in found), sum(int(s) for _, s in found)

    def spans(
        self, trace_ids: Iterable[str] | None = None, unreadable: list[str] | None = None
    ) -> Iterator[Span]:
        """The stored spans of ``trace_ids`` (all traces when ``None``), in arrival order, one
        request's body in memory at a time. A stored request that no longer decodes is
        skipped, and named in ``unreadable`` when given."""
        wanted = None if trace_ids is None else set(trace_ids)
        for request_id in self._request_ids(wanted):
            with self._connect() as db:
                row = db.execute(
                    "SELECT format, body FROM requests WHERE id = ?", (request_id,)
                ).fetchone()
            try:
                spans = decode(row[1], row[0])
            except Exception as exc:
                if unreadable is not None:
                    unreadable.append(f"export request {request_id}: {exc}")
                continue
            for span in spans:
                if wanted is None or span.trace_id in wanted:
                    yield span

    def _request_ids(self, wanted: set[str] | None) -> list[int]:
        """The ids of the requests holding ``wanted`` traces (all when ``None``), in order; the
        ids are asked in chunks, as SQLite binds a bounded number of values per statement."""
        with self._connect() as db:
            if wanted is None:
                return [i for (i,) in db.execute("SELECT id FROM requests ORDER BY id")]
            found: set[int] = set()
            for chunk in _chunks(sorted(wanted)):
                found.update(
                    i
                    for (i,) in db.execute(
                        "SELECT request_id FROM request_traces WHERE trace_id IN "
                        f"({','.join('?' * len(chunk))})",
                        chunk,
                    )
                )
        return sorted(found)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection that commits on success, rolls back on error, then closes."""
        connection = sqlite3.connect(self.path, timeout=30)
        try:
            with self._lock:
                if not self._ready:
                    connection.executescript(_SCHEMA)
                    self._ready = True
            with connection:
                yield connection
        finally:
            connection.close()


#: Values bound per statement, well under SQLite's least limit (999 before 3.32).
_CHUNK = 500


def _chunks(items: Iterable[str]) -> Iterator[list[str]]:
    chunk: list[str] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == _CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
