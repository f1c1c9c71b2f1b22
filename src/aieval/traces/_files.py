"""Reading OTLP trace files, streamed: OTLP/JSON lines (the collector's file exporter), one
OTLP/JSON object, OTLP/protobuf (one message, or the file exporter's length-prefixed messages),
and folders of them.

A file cut short while it was written (its last JSON line unfinished, its last protobuf message
missing bytes) is not an error: the traces it names are marked cut, so they fail
``trace_complete`` instead of being graded on what arrived.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._files import readable
from aieval._tracefiles import PROTO_SUFFIXES, trace_files
from aieval.errors import WorkflowError
from aieval.traces._spans import Span, spans_from_bytes, spans_from_proto

__all__ = ["Cut", "read_path"]

# one pretty-printed object is read whole up to this size; lines stream at any size
_MAX_OBJECT_BYTES = 512_000_000
_TRACE_ID = re.compile(rb'"trace_?[iI]d"\s*:\s*"([0-9a-fA-F]{32})"')
_PREFIX = 4


@dataclass(frozen=True, slots=True)
class Cut:
    """A file cut short: the traces it may have cut (those its unfinished part names, else
    every trace of the file) and why."""

    file: str
    trace_ids: frozenset[str]
    reason: str


def read_path(path: str | Path) -> Iterator[Span | Cut]:
    """Every span of a trace file or of the trace files of a folder, then a :class:`Cut` for
    each file that ends cut short.

    Raises:
        WorkflowError: a missing path, a folder without trace files, or a malformed export
            (names the file, and the line for JSON).
    """
    target = readable(path, "traces")
    if target.is_dir():
        files = [readable(f, f"trace file {f.name}") for f in trace_files(target)]
        if not files:
            raise WorkflowError(f"{target}: holds no OTLP trace files (*.json, *.jsonl, *.pb)")
    elif target.is_file():
        files = [target]
    else:
        raise WorkflowError(f"{target}: trace file not found")
    for file in files:
        if file.suffix.lower() in PROTO_SUFFIXES:
            yield from _read_proto(file)
        else:
            yield from _read_json(file)


def _read_json(file: Path) -> Iterator[Span | Cut]:
    seen: set[str] = set()
    with file.open("rb") as handle:
        first = True
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                spans = list(spans_from_bytes(line, f"{file}, line {number}"))
            except WorkflowError as exc:
                if first:  # a pretty-printed request spreads one object over lines
                    yield from _read_one_object(file, exc)
                    return
                if not line.endswith(b"\n") and not handle.read(1):
                    yield _cut_line(file, number, line, seen)
                    return
                raise
            first = False
            for span in spans:
                seen.add(span.trace_id)
            yield from spans


def _read_one_object(file: Path, line_error: WorkflowError) -> Iterator[Span | Cut]:
    """A file that is one (pretty-printed) export request."""
    if file.stat().st_size > _MAX_OBJECT_BYTES:
        raise line_error
    data = file.read_bytes()
    try:
        spans = list(spans_from_bytes(data, str(file)))
    except WorkflowError as exc:
        ids = frozenset(m.decode().lower() for m in _TRACE_ID.findall(data))
        if ids and not data.rstrip().endswith(b"}"):
            yield Cut(str(file), ids, f"{file} ends in an unfinished export ({exc})")
            return
        if data.lstrip()[:2] == b'{"':  # lines of requests, the first one bad
            raise line_error from None
        raise
    yield from spans


def _cut_line(file: Path, number: int, line: bytes, seen: set[str]) -> Cut:
    ids = frozenset(m.decode().lower() for m in _TRACE_ID.findall(line))
    reason = f"{file}, line {number}: the file ends in an unfinished export line"
    return Cut(str(file), ids or frozenset(seen), reason)


def _read_proto(file: Path) -> Iterator[Span | Cut]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    with file.open("rb") as handle:
        head = handle.read(1)
        if not head:
            return
        if head != b"\x00":  # one message, as an OTLP/HTTP body
            request = ExportTraceServiceRequest()
            _parse(request, head + handle.read(), file, 1)
            yield from spans_from_proto(request)
            return
        handle.seek(0)
        index = 0
        seen: set[str] = set()
        while True:
            prefix = handle.read(_PREFIX)
            if not prefix:
                return
            index += 1
            size = int.from_bytes(prefix, "big") if len(prefix) == _PREFIX else -1
            body = handle.read(size) if size >= 0 else b""
            if size < 0 or len(body) < size:
                reason = f"{file}: message {index} is cut short (the file ends inside it)"
                yield Cut(str(file), frozenset(seen), reason)
                return
            request = ExportTraceServiceRequest()
            _parse(request, body, file, index)
            for span in spans_from_proto(request):
                seen.add(span.trace_id)
                yield span


def _parse(request: Any, body: bytes, file: Path, index: int) -> None:
    from google.protobuf.message import DecodeError

    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise WorkflowError(
            f"{file}: message {index} is not an OTLP ExportTraceServiceRequest: {exc}"
        ) from None
