"""Trace files (or export requests) to workflow runs, one per trace, streamed."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aieval.traces._files import Cut, read_path
from aieval.traces._group import DEFAULT_MAX_BYTES_IN_MEMORY, DEFAULT_MAX_IN_MEMORY, group
from aieval.traces._mapping import trace_run
from aieval.traces._spans import Span
from aieval.workflows import WorkflowRun

__all__ = ["TraceReading", "iter_trace_runs", "load_traces", "runs_from_spans"]


@dataclass(slots=True)
class TraceReading:
    """What reading traces saw: spans, traces, the incomplete ones and the unmapped spans.

    Attributes:
        spans: spans read.
        traces: traces (runs) produced.
        spills: how many times grouping moved the held spans to a temporary file (0: the
            spans fit in memory).
        incomplete: trace id -> what is missing, for traces that fail ``trace_complete``.
        unmapped: span name -> count, over spans of no known GenAI shape.
    """

    spans: int = 0
    traces: int = 0
    spills: int = 0
    incomplete: dict[str, list[str]] = field(default_factory=dict)
    unmapped: dict[str, int] = field(default_factory=dict)

    def add(self, run: WorkflowRun) -> None:
        meta = run.metadata["trace"]
        self.traces += 1
        if meta["missing"]:
            self.incomplete[run.workflow_id] = list(meta["missing"])
        for name, n in meta["unmapped"].items():
            self.unmapped[name] = self.unmapped.get(name, 0) + n


def iter_trace_runs(
    path: str | Path,
    reading: TraceReading | None = None,
    *,
    max_spans_in_memory: int = DEFAULT_MAX_IN_MEMORY,
    max_bytes_in_memory: int = DEFAULT_MAX_BYTES_IN_MEMORY,
    max_request_bytes: int | None = None,
) -> Iterator[WorkflowRun]:
    """The runs of a trace file or folder, one per trace id, in order of first appearance.

    Args:
        path: an OTLP/JSON or OTLP/protobuf file, or a folder of them.
        reading: filled with what was read, if given.
        max_spans_in_memory: spans held before grouping spills to a temporary file.
        max_bytes_in_memory: bytes of held spans (estimated) before grouping spills.
        max_request_bytes: the largest export request (a JSON line, a one-object file, a
            protobuf message) read whole; default: the ``AIEVAL_TRACE_MAX_REQUEST_BYTES``
            environment variable, else 64 MiB.

    Raises:
        WorkflowError: a missing path, a malformed export (names file and line), or an
            export request over ``max_request_bytes`` (names file, line, size and limit).
    """
    spans = read_path(path, max_request_bytes)
    yield from _runs(spans, reading, max_spans_in_memory, max_bytes_in_memory)


def load_traces(path: str | Path, *, max_request_bytes: int | None = None) -> list[WorkflowRun]:
    """Every run of a trace file or folder (see :func:`iter_trace_runs`).

    Example:
        >>> load_traces("missing.jsonl")
        Traceback (most recent call last):
        aieval.errors.WorkflowError: missing.jsonl: trace file not found
    """
    return list(iter_trace_runs(path, max_request_bytes=max_request_bytes))


def runs_from_spans(
    spans: Iterable[Span], reading: TraceReading | None = None
) -> list[WorkflowRun]:
    """The runs of spans decoded elsewhere (see :func:`spans_from_json`, :func:`spans_from_proto`),
    one per trace id, each trace on its own: a span that cannot be read or mapped makes its
    trace incomplete (named in ``missing``), never fails the others."""
    return list(
        _runs(spans, reading, DEFAULT_MAX_IN_MEMORY, DEFAULT_MAX_BYTES_IN_MEMORY, isolate=True)
    )


def _runs(
    items: Iterable[Span | Cut],
    reading: TraceReading | None,
    max_in_memory: int,
    max_bytes_in_memory: int,
    *,
    isolate: bool = False,
) -> Iterator[WorkflowRun]:
    grouped = group(items, max_in_memory, max_bytes_in_memory)
    if reading is not None:
        reading.spans += grouped.spans
        reading.spills += grouped.spills
    for trace_id, spans, cuts in grouped.traces():
        run = _isolated_run(trace_id, spans, cuts) if isolate else trace_run(trace_id, spans, cuts)
        if reading is not None:
            reading.add(run)
        yield run


def _isolated_run(trace_id: str, spans: list[Span], cuts: list[str]) -> WorkflowRun:
    """The trace's run; a trace that cannot be mapped at all is a failed, incomplete run that
    says why, so the other traces are graded still."""
    try:
        return trace_run(trace_id, spans, cuts, isolate=True)
    except Exception as exc:
        reason = f"the trace could not be mapped ({type(exc).__name__}: {exc})"
        meta = {
            "trace_id": trace_id,
            "spans": len(spans),
            "duplicate_spans": 0,
            "mapped": {},
            "unmapped": {},
            "complete": False,
            "missing": [*cuts, reason],
        }
        return WorkflowRun(
            workflow_id=trace_id,
            workflow_name="",
            status="failed",
            steps=[],
            metadata={"trace": meta},
            error=reason,
        )
