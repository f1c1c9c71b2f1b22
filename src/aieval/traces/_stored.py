"""The spans of the export requests a server received, decoded from the bodies the run store
keeps as they arrived (:class:`~aieval.store.ReceivedTraces`): what grading on request and
online scoring read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from aieval.store import ReceivedTraces
from aieval.traces._spans import Span, spans_from_bytes, spans_from_proto

__all__ = ["decode", "stored_spans"]


def decode(body: bytes, fmt: str) -> list[Span]:
    """The spans of one export request body (``fmt``: ``protobuf`` or ``json``).

    Raises:
        WorkflowError, ValueError, DecodeError: a body that is not an export request.
    """
    if fmt == "json":
        return list(spans_from_bytes(body, "request body"))
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return list(spans_from_proto(request))


def stored_spans(
    store: ReceivedTraces,
    trace_ids: Iterable[str] | None = None,
    unreadable: list[str] | None = None,
) -> Iterator[Span]:
    """The stored spans of ``trace_ids`` (all traces when ``None``), in arrival order, one
    request's body in memory at a time. A stored request that no longer decodes is skipped,
    and named in ``unreadable`` when given."""
    wanted = None if trace_ids is None else set(trace_ids)
    for request_id in store.request_ids(wanted):
        request = store.request(request_id)
        if request is None:
            continue  # deleted since it was listed
        try:
            spans = decode(request.body, request.format)
        except Exception as exc:
            if unreadable is not None:
                unreadable.append(f"export request {request_id}: {exc}")
            continue
        for span in spans:
            if wanted is None or span.trace_id in wanted:
                yield span
