"""Which paths hold OpenTelemetry trace data (OTLP/JSON or OTLP/protobuf): a cheap sniff.

Standard library only, so the runner can ask without importing the trace reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["JSON_SUFFIXES", "PROTO_SUFFIXES", "is_trace_data", "is_trace_file", "trace_files"]

#: Suffixes of OTLP/protobuf files (one ``ExportTraceServiceRequest``, or length-prefixed ones).
PROTO_SUFFIXES = (".pb", ".binpb", ".otlp", ".protobuf")
#: Suffixes of OTLP/JSON files (one request per line, or one object).
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
_SNIFF_BYTES = 8192
# an export request's first key, as exporters write it
_REQUEST_START = re.compile(rb'\s*\{\s*"resource(?:Spans|_spans)"\s*:')


def is_trace_file(path: Path) -> bool:
    """A protobuf suffix, or a JSON file that starts as an export request
    (``{"resourceSpans": ...``)."""
    suffix = path.suffix.lower()
    if suffix in PROTO_SUFFIXES:
        return True
    if suffix not in JSON_SUFFIXES:
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    return _REQUEST_START.match(head) is not None


def trace_files(folder: Path) -> list[Path]:
    """The trace files of a folder, sorted by name (not recursive)."""
    return [f for f in sorted(folder.iterdir()) if f.is_file() and is_trace_file(f)]


def is_trace_data(dataset: Any) -> bool:
    """Whether a dataset argument is a trace file or a folder holding trace files."""
    if not isinstance(dataset, str | Path):
        return False
    path = Path(dataset)
    try:
        if path.is_dir():
            return bool(trace_files(path))
        return path.is_file() and is_trace_file(path)
    except OSError:
        return False
