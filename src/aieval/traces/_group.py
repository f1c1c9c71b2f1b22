"""Spans grouped by trace id, in memory up to a budget, then spilled to a temporary SQLite file.

A trace's spans may arrive in many export batches and lines, so no trace is known whole before
the input ends; holding every span would make memory grow with the file. Once the held spans
take ``max_bytes_in_memory`` (estimated from their share of the export requests they came in,
whose buffers their undecoded details point into, plus their own objects: see
:func:`~aieval.traces._spans.held_bytes`) or number ``max_in_memory``, they move to a temporary
database (pickled undecoded, keyed by trace), and traces are read back one at a time, so memory
stays bounded for any file size.
"""

from __future__ import annotations

import gc
import pickle
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from aieval.errors import ConfigError
from aieval.traces._files import Cut
from aieval.traces._spans import Span, held_bytes

__all__ = ["DEFAULT_MAX_BYTES_IN_MEMORY", "DEFAULT_MAX_IN_MEMORY", "Grouped", "group"]

#: Spans held in memory before the grouping spills to disk.
DEFAULT_MAX_IN_MEMORY = 500_000
#: Bytes of held spans (estimated) before the grouping spills to disk.
DEFAULT_MAX_BYTES_IN_MEMORY = 128 * 2**20


class Grouped:
    """Traces in order of first appearance: ``(trace id, spans, cut reasons)``.

    Attributes:
        spans: spans added.
        spills: how many times the held spans moved to disk.
    """

    def __init__(
        self,
        max_in_memory: int = DEFAULT_MAX_IN_MEMORY,
        max_bytes_in_memory: int = DEFAULT_MAX_BYTES_IN_MEMORY,
    ) -> None:
        for name, bound in (
            ("max_spans_in_memory", max_in_memory),
            ("max_bytes_in_memory", max_bytes_in_memory),
        ):
            if isinstance(bound, bool) or not isinstance(bound, int) or bound <= 0:
                raise ConfigError(f"{name}: expected a positive whole number, got {bound!r}")
        self.max_in_memory = max_in_memory
        self.max_bytes_in_memory = max_bytes_in_memory
        self.held: dict[str, list[Span]] = {}
        self.order: dict[str, None] = {}
        self.cuts: list[Cut] = []
        self.spans = 0
        self.spills = 0
        self._held_count = 0
        self._held_bytes = 0
        self._db: sqlite3.Connection | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def add(self, item: Span | Cut) -> None:
        if isinstance(item, Cut):
            self.cuts.append(item)
            return
        spans = self.held.get(item.trace_id)
        if spans is None:
            spans = self.held[item.trace_id] = []
            self.order[item.trace_id] = None
        spans.append(item)
        self.spans += 1
        self._held_count += 1
        self._held_bytes += held_bytes(item)
        if self._held_count >= self.max_in_memory or self._held_bytes >= self.max_bytes_in_memory:
            self._spill()

    def traces(self) -> Iterator[tuple[str, list[Span], list[str]]]:
        """Each trace once, with the reasons it was cut (empty when it was not)."""
        try:
            for trace_id in self.order:
                spans = self._spilled(trace_id) + self.held.pop(trace_id, [])
                yield trace_id, spans, self._cut_reasons(trace_id)
        finally:
            self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def _cut_reasons(self, trace_id: str) -> list[str]:
        return [c.reason for c in self.cuts if trace_id in c.trace_ids]

    def _spill(self) -> None:
        if self._db is None:
            self._dir = tempfile.TemporaryDirectory(prefix="aieval-traces-")
            self._db = sqlite3.connect(Path(self._dir.name) / "spans.db")
            # a scratch file read back by this process only: no journal, no fsync (waiting on
            # the disk was most of the spill's wall time)
            self._db.execute("PRAGMA journal_mode = OFF")
            self._db.execute("PRAGMA synchronous = OFF")
            self._db.execute("CREATE TABLE spans (trace TEXT, batch BLOB)")
            self._db.execute("CREATE INDEX spans_trace ON spans (trace)")
        self._db.executemany(
            "INSERT INTO spans VALUES (?, ?)",
            ((t, pickle.dumps(s, pickle.HIGHEST_PROTOCOL)) for t, s in self.held.items()),
        )
        self._db.commit()
        self.held = {}
        self._held_count = 0
        self._held_bytes = 0
        self.spills += 1

    def _spilled(self, trace_id: str) -> list[Span]:
        if self._db is None:
            return []
        rows = self._db.execute(
            "SELECT batch FROM spans WHERE trace = ? ORDER BY rowid", (trace_id,)
        )
        return [span for (batch,) in rows for span in pickle.loads(batch)]


def group(
    items: Iterable[Span | Cut],
    max_in_memory: int = DEFAULT_MAX_IN_MEMORY,
    max_bytes_in_memory: int = DEFAULT_MAX_BYTES_IN_MEMORY,
) -> Grouped:
    """Group spans by trace, noting cut files."""
    grouped = Grouped(max_in_memory, max_bytes_in_memory)
    add = grouped.add
    # millions of new, acyclic objects: collection passes would only re-scan them
    enabled = gc.isenabled()
    gc.disable()
    try:
        for item in items:
            add(item)
    finally:
        if enabled:
            gc.enable()
    return grouped
