"""OpenTelemetry traces as workflow runs: OTLP/JSON and OTLP/protobuf files, folders and
export requests, one run per trace, mapped from the GenAI semantic conventions and
OpenInference (see docs/workflows.md, "Evaluate traces").

Example:
    >>> from aieval.traces import load_traces
    >>> runs = load_traces("traces.jsonl")  # doctest: +SKIP
    >>> runs[0].workflow_id, [s.agent_role for s in runs[0].steps]  # doctest: +SKIP
    ('4bf92f3577b34da6a3ce929d0e0e4736', ['triage', 'billing'])
"""

try:
    import google.protobuf  # noqa: F401
    import msgspec  # noqa: F401
    import opentelemetry.proto  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reading OpenTelemetry traces needs msgspec and opentelemetry-proto: "
        "pip install 'aieval[traces]'"
    ) from exc

from aieval.traces._files import DEFAULT_MAX_REQUEST_BYTES, MAX_REQUEST_BYTES_ENV
from aieval.traces._group import DEFAULT_MAX_BYTES_IN_MEMORY, DEFAULT_MAX_IN_MEMORY
from aieval.traces._intake import check_request, count_items
from aieval.traces._mapping import trace_run
from aieval.traces._read import TraceReading, iter_trace_runs, load_traces, runs_from_spans
from aieval.traces._spans import Span, spans_from_bytes, spans_from_json, spans_from_proto
from aieval.traces._stored import decode, stored_spans

__all__ = [
    "DEFAULT_MAX_BYTES_IN_MEMORY",
    "DEFAULT_MAX_IN_MEMORY",
    "DEFAULT_MAX_REQUEST_BYTES",
    "MAX_REQUEST_BYTES_ENV",
    "Span",
    "TraceReading",
    "check_request",
    "count_items",
    "decode",
    "iter_trace_runs",
    "load_traces",
    "runs_from_spans",
    "spans_from_bytes",
    "spans_from_json",
    "spans_from_proto",
    "stored_spans",
    "trace_run",
]
