"""Reading OTLP trace files, streamed: OTLP/JSON lines (the collector's file exporter), one
OTLP/JSON object, OTLP/protobuf (one message, or the file exporter's length-prefixed messages),
and folders of them.

A file cut short while it was written (its last JSON line unfinished, its last protobuf message
missing bytes) is not an error: the traces it names are marked cut, so they fail
``trace_complete`` instead of being graded on what arrived.

Each export request (a JSON line, a file holding one object, a protobuf message) is decoded
whole, which takes several times its size in memory: one larger than ``max_request_bytes`` is
refused, naming the file, the line (or message), its size and the limit, before it is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from aieval._files import readable
from aieval._tracefiles import PROTO_SUFFIXES, trace_files
from aieval.errors import ConfigError, WorkflowError
from aieval.traces._spans import Span, spans_from_bytes, spans_from_proto

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "MAX_REQUEST_BYTES_ENV", "Cut", "read_path"]

#: The largest export request (a JSON line, a one-object file, a protobuf message) read whole.
DEFAULT_MAX_REQUEST_BYTES = 64 * 2**20
#: The environment variable that sets it where no argument can (eval files, the CLI).
MAX_REQUEST_BYTES_ENV = "AIEVAL_TRACE_MAX_REQUEST_BYTES"
_SCAN = 2**20
_TRACE_ID = re.compile(rb'"trace_?[iI]d"\s*:\s*"([0-9a-fA-F]{32})"')
_PREFIX = 4


@dataclass(frozen=True, slots=True)
class Cut:
    """A file cut short: the traces it may have cut (those its unfinished part names, else
    every trace of the file) and why."""

    file: str
    trace_ids: frozenset[str]
    reason: str


def read_path(path: str | Path, max_request_bytes: int | None = None) -> Iterator[Span | Cut]:
    """Every span of a trace file or of the trace files of a folder, then a :class:`Cut` for
    each file that ends cut short.

    Args:
        path: a trace file or folder.
        max_request_bytes: the largest export request read (default: the
            ``AIEVAL_TRACE_MAX_REQUEST_BYTES`` environment variable, else 64 MiB).

    Raises:
        WorkflowError: a missing path, a folder without trace files, a malformed export
            (names the file, and the line for JSON), or a request over ``max_request_bytes``.
    """
    limit = _request_limit(max_request_bytes)
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
            yield from _read_proto(file, limit)
        else:
            yield from _read_json(file, limit)


def _request_limit(given: int | None) -> int:
    """``given``, else the environment's setting, else the default.

    Raises:
        ConfigError: a limit that is not a positive whole number of bytes.
    """
    if given is None:
        text = os.environ.get(MAX_REQUEST_BYTES_ENV, "").strip()
        if not text:
            return DEFAULT_MAX_REQUEST_BYTES
        try:
            given = int(text.replace("_", ""))
        except ValueError:
            raise ConfigError(
                f"{MAX_REQUEST_BYTES_ENV}={text!r}: expected a whole number of bytes"
            ) from None
        where = MAX_REQUEST_BYTES_ENV
    else:
        where = "max_request_bytes"
    if isinstance(given, bool) or not isinstance(given, int) or given <= 0:
        raise ConfigError(f"{where}: expected a positive number of bytes, got {given!r}")
    return given


def _too_big(where: str, size: int, limit: int) -> WorkflowError:
    return WorkflowError(
        f"{where}: one export request of {_size(size)} is over the limit of {_size(limit)} for "
        f"a request read whole (decoding it takes several times its size in memory); raise "
        f"the limit with max_request_bytes= (or the {MAX_REQUEST_BYTES_ENV} environment "
        "variable for eval files and the CLI), or have the exporter write smaller batches"
    )


def _size(n: int) -> str:
    return f"{n:,} bytes ({n / 2**20:,.1f} MiB)"


def _line(handle: BinaryIO, file: Path, number: int, limit: int) -> bytes:
    """Line ``number``, with its newline (``b""`` at the end of the file). A line longer than
    a piece is measured first, in pieces never held, then read in one allocation, or refused
    when over ``limit``: memory never holds more of a refused line than one piece."""
    start = handle.tell()
    line = handle.readline(_SCAN)
    newline = line.endswith(b"\n")
    size = len(line) - newline
    if newline or len(line) < _SCAN:
        if size > limit:
            raise _too_big(f"{file}, line {number}", size, limit)
        return line
    while piece := handle.readline(_SCAN):
        newline = piece.endswith(b"\n")
        size += len(piece) - newline
        if newline:
            break
    if size > limit:
        raise _too_big(f"{file}, line {number}", size, limit)
    handle.seek(start)
    return handle.read(size + newline)


def _read_json(file: Path, limit: int) -> Iterator[Span | Cut]:
    seen: set[str] = set()
    with file.open("rb") as handle:
        first = True
        number = 0
        while line := _line(handle, file, number + 1, limit):
            number += 1
            if not line.strip():
                continue
            try:
                spans = list(spans_from_bytes(line, f"{file}, line {number}"))
            except WorkflowError as exc:
                if first:  # a pretty-printed request spreads one object over lines
                    yield from _read_one_object(file, exc, limit)
                    return
                if not line.endswith(b"\n") and not handle.read(1):
                    yield _cut_line(file, number, line, seen)
                    return
                raise
            first = False
            for span in spans:
                seen.add(span.trace_id)
            yield from spans


def _read_one_object(file: Path, line_error: WorkflowError, limit: int) -> Iterator[Span | Cut]:
    """A file that is one (pretty-printed) export request."""
    size = file.stat().st_size
    if size > limit:
        with file.open("rb") as handle:
            if handle.read(_SCAN).lstrip()[:2] == b'{"':  # lines of requests, the first one bad
                raise line_error
        raise _too_big(f"{file} (one JSON object)", size, limit)
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


def _read_proto(file: Path, limit: int) -> Iterator[Span | Cut]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    total = file.stat().st_size
    with file.open("rb") as handle:
        head = handle.read(1)
        if not head:
            return
        if head != b"\x00":  # one message, as an OTLP/HTTP body
            if total > limit:
                raise _too_big(f"{file} (one protobuf message)", total, limit)
            request = ExportTraceServiceRequest()
            body = head + handle.read()
            _parse(request, body, file, 1)
            yield from spans_from_proto(request, len(body), str(file))
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
            if size > total - handle.tell() or size < 0:
                reason = f"{file}: message {index} is cut short (the file ends inside it)"
                yield Cut(str(file), frozenset(seen), reason)
                return
            if size > limit:
                raise _too_big(f"{file}, message {index}", size, limit)
            body = handle.read(size)
            if len(body) < size:  # the file shrank while read
                reason = f"{file}: message {index} is cut short (the file ends inside it)"
                yield Cut(str(file), frozenset(seen), reason)
                return
            request = ExportTraceServiceRequest()
            _parse(request, body, file, index)
            for span in spans_from_proto(request, size, f"{file}, message {index}"):
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
