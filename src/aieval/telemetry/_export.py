"""Replay a stored run as OpenTelemetry spans, after the fact."""

from __future__ import annotations

import os
from typing import Any

from aieval.store import RunRow, Store
from aieval.telemetry._attributes import RunHeader
from aieval.telemetry._spans import RunSpans, require_otel

__all__ = ["export_run", "header_of"]


def export_run(
    store: Store | str | os.PathLike[str], run_ref: str, tracer_provider: Any = None
) -> int:
    """Emit a stored run as spans, as a live run with ``telemetry=True`` would have.

    Each sample's span ends when the sample was stored and lasts as long as its recorded work;
    the run span covers the run's start to finish.

    Args:
        store: the run store (or its location: a path or a ``postgresql://`` URL).
        run_ref: run id, unique id prefix, or run name (its latest run).
        tracer_provider: where spans go; the global tracer provider when omitted. Spans are
            handed to its span processors: call its ``force_flush()`` or ``shutdown()`` to be
            sure they were exported.

    Returns:
        The number of sample spans emitted.

    Raises:
        ConfigError: the ``otel`` extra is not installed.
        RunNotFoundError: no run matches ``run_ref``.
    """
    require_otel()
    db = store if isinstance(store, Store) else Store(store)
    row = db.get_run(run_ref)
    ended = db.sample_times(row.id)
    start = row.started_at if row.started_at is not None else row.created_at
    spans = RunSpans(header_of(row), start, tracer_provider)
    count = 0
    last = start
    for sample in db.iter_samples(row.id):
        end = ended.get(sample.id, start)
        last = max(last, end)
        spans.sample(sample, end)
        count += 1
    finished = row.finished_at if row.finished_at is not None else last
    spans.finish(row.status, row.metrics, row.error, end_s=finished)
    return count


def header_of(row: RunRow) -> RunHeader:
    """The run span's fixed facts from a stored run."""
    return RunHeader.of(row)
