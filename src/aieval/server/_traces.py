"""OTLP/HTTP trace intake and grading what arrived.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as protobuf
(``application/x-protobuf``) or OTLP/JSON (``application/json``), gzip-encoded or not, behind
the server's token like every route, and keeps it losslessly (see :mod:`._tracestore`).
``GET /api/traces`` lists the stored traces; ``POST /api/traces/evaluations`` grades them
(all, or the ids given) with a workflow definition and profile as one stored run, one sample
per trace; a trace still arriving fails ``trace_complete`` rather than being graded whole.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from aieval._files import confined_to
from aieval.errors import ConfigError, WorkflowError
from aieval.server._responses import SafeJSONResponse
from aieval.server._tracestore import TraceStore, decode
from aieval.store import StoreLocation

__all__ = ["TraceEvaluationRequest", "intake", "trace_store", "traces_api"]

#: The largest export request accepted (decompressed), in bytes.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
_PROTOBUF = "application/x-protobuf"

intake = APIRouter()
traces_api = APIRouter(prefix="/api/traces")


def trace_store(location: StoreLocation) -> TraceStore:
    """The trace store of a run store: ``<store>.traces.db`` beside an SQLite store; for a
    PostgreSQL store, the local file ``$AIEVAL_TRACES_DB`` (default ``./aieval-traces.db``)."""
    beside = location.sibling(".traces.db")
    if beside is not None:
        return TraceStore(beside)
    return TraceStore(Path(os.environ.get("AIEVAL_TRACES_DB") or "aieval-traces.db"))


class TraceEvaluationRequest(BaseModel):
    """Grade stored traces: a workflow (inline, or a file inside the roots) and/or profile."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="the run's name")
    workflow: str | dict[str, Any] | None = Field(None, description="workflow definition")
    profile: str | None = Field(None, description="scoring profile id, family or file")
    trace_ids: list[str] | None = Field(None, description="the traces to grade (default: all)")
    enforce_hard_gates: bool = True


@intake.post("/v1/traces")
async def receive_traces(request: Request) -> Response:
    """Keep one OTLP export request; answer an ``ExportTraceServiceResponse``."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in (_PROTOBUF, "application/json"):
        return _refuse(415, f"content type {kind!r}: send {_PROTOBUF} or application/json")
    body = await request.body()
    try:
        import aieval.traces  # noqa: F401
    except ImportError as exc:
        return _refuse(501, str(exc))
    try:
        body = _decompressed(body, request.headers.get("content-encoding", ""))
        fmt = "json" if kind == "application/json" else "protobuf"
        spans = decode(body, fmt)
    except _TooLarge:
        return _refuse(413, f"export request larger than {MAX_REQUEST_BYTES} bytes")
    except (ValueError, WorkflowError, zlib.error, OSError, EOFError) as exc:
        return _refuse(400, f"not an OTLP export request: {exc}")
    except Exception as exc:  # protobuf's DecodeError
        return _refuse(400, f"not an OTLP export request: {type(exc).__name__}: {exc}")
    store: TraceStore = request.app.state.trace_store
    store.add(body, fmt, spans)
    if kind == "application/json":
        return SafeJSONResponse({})
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    return Response(ExportTraceServiceResponse().SerializeToString(), media_type=_PROTOBUF)


@traces_api.get("")
def list_traces(request: Request) -> dict[str, Any]:
    """The stored traces: id, spans received, export requests, first and last arrival."""
    store: TraceStore = request.app.state.trace_store
    return {"traces": [_row(t) for t in store.traces()]}


@traces_api.post("/evaluations")
def grade_traces(body: TraceEvaluationRequest, request: Request) -> dict[str, Any]:
    """Grade stored traces as one run (one sample per trace) and answer its verdicts."""
    from aieval.runner import run
    from aieval.traces import TraceReading, runs_from_spans

    state = request.app.state
    if body.workflow is None and body.profile is None:
        raise ConfigError("give a workflow or a profile to grade the traces with")
    store: TraceStore = state.trace_store
    reading = TraceReading()
    runs = runs_from_spans(store.spans(body.trace_ids), reading)
    if not runs:
        which = "the given trace_ids" if body.trace_ids else "this server"
        raise ConfigError(f"trace_ids: no stored spans for {which}")
    if body.trace_ids:
        unknown = sorted(set(body.trace_ids) - {r.workflow_id for r in runs})
        if unknown:
            raise ConfigError(f"trace_ids: no stored spans for {', '.join(unknown)}")
    rows = [{"id": r.workflow_id, "input": r.inputs or {}, "run": r.to_dict()} for r in runs]
    with confined_to(state.settings.dataset_roots):
        result = run(
            name=body.name,
            dataset=rows,
            scorers=[],
            workflow=body.workflow,
            profile=body.profile,
            enforce_hard_gates=body.enforce_hard_gates,
            store=state.store,
        )
    return {
        "run_id": result.id,
        "traces": reading.traces,
        "spans": reading.spans,
        "incomplete": reading.incomplete,
        "unmapped": reading.unmapped,
        "verdicts": {
            s.id: {
                "grade": s.verdict.grade,
                "passed": s.verdict.passed,
                "gate_failures": [
                    {"name": g.name, "reason": g.reason} for g in s.verdict.gates if not g.passed
                ],
            }
            for s in result.samples
            if s.verdict is not None
        },
    }


class _TooLarge(Exception):
    pass


def _decompressed(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        data = body
    elif encoding == "gzip":
        data = gzip.decompress(body)
    elif encoding == "deflate":
        data = zlib.decompress(body)
    else:
        raise ValueError(f"content encoding {encoding!r} is not supported (gzip, deflate)")
    if len(data) > MAX_REQUEST_BYTES:
        raise _TooLarge
    return data


def _row(trace: Any) -> dict[str, Any]:
    return {
        "trace_id": trace.trace_id,
        "spans": trace.spans,
        "requests": trace.requests,
        "first_received": trace.first_received,
        "last_received": trace.last_received,
    }


def _refuse(status: int, message: str) -> SafeJSONResponse:
    return SafeJSONResponse({"message": message, "reasons": []}, status_code=status)
