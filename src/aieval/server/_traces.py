"""OTLP/HTTP trace intake and grading what arrived.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as protobuf
(``application/x-protobuf``) or OTLP/JSON (``application/json``), gzip-encoded or not, behind
the server's token like every route, and keeps it losslessly in the run store (see
:class:`aieval.store.ReceivedTraces`) once
every field is checked (:func:`aieval.traces.check_request`). The body is decompressed in
bounded pieces as it arrives, against a byte budget shared by every request being received
and a deadline that grows with the bytes received (a client that trickles its body is answered
408, and never holds more than it sent); its objects are then counted, decoded and checked off
the event loop, a few requests at once, so other routes answer meanwhile.
``GET /api/traces`` lists the stored traces; ``POST /api/traces/evaluations`` grades them
(all, or the ids given) with a workflow definition and profile as one stored run, one sample
per trace; a trace still arriving fails ``trace_complete`` rather than being graded whole.
Each trace is mapped on its own (a bad span makes only its trace incomplete), and gradings are
bounded in traces, spans and number at once."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import threading
import time
import zlib
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from aieval._files import confined_to
from aieval.errors import ConfigError, WorkflowError
from aieval.server._responses import SafeJSONResponse
from aieval.server._trace_spans import stored_spans
from aieval.server._window_names import refuse_window_name
from aieval.store import ReceivedTraces, StoreLocation, earlier_trace_file

__all__ = ["IntakeBytes", "TraceEvaluationRequest", "intake", "trace_store", "traces_api"]

#: The largest export request accepted, in bytes, as received and decompressed.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: The most traces one grading request may grade (or name in ``trace_ids``).
MAX_TRACE_IDS = 10_000
#: The most stored spans one grading request may grade (grading holds each trace's run, and
#: memory grows with the spans): grade more in several requests, naming ``trace_ids``.
MAX_GRADED_SPANS = 200_000
#: Gradings of received traces at once; one more is answered 503 with ``Retry-After``.
MAX_CONCURRENT_GRADINGS = 2
#: Export requests decoded and checked at once (decoding takes memory in proportion to the
#: request); one more is answered 503 with ``Retry-After``, which OTLP exporters retry.
MAX_CONCURRENT_INTAKES = 4
#: Bytes (decompressed) held by all the export requests being received at once; a request
#: whose next piece would go over is answered 503 with ``Retry-After``. A request takes its
#: share as its bytes arrive, never by the size it declares.
MAX_INTAKE_BYTES = MAX_CONCURRENT_INTAKES * MAX_REQUEST_BYTES
#: Seconds any request body may take to arrive, plus one per :data:`MIN_BODY_RATE` bytes
#: received: a client slower than that is answered 408, so it holds its bytes only briefly.
BODY_GRACE_S = 10.0
#: Bytes per second a request body must keep up, on average, after :data:`BODY_GRACE_S`.
MIN_BODY_RATE = 16 * 1024
#: Seconds a client is asked to wait (``Retry-After``) when every slot is taken.
RETRY_AFTER_S = 5
#: The most JSON objects and arrays (OTLP/JSON) or fields (protobuf) in one export request:
#: decoding takes memory in proportion to them, whatever the body's size.
MAX_REQUEST_ITEMS = 1_000_000
_PROTOBUF = "application/x-protobuf"
_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")

intake = APIRouter()
traces_api = APIRouter(prefix="/api/traces")


def trace_store(location: StoreLocation) -> ReceivedTraces:
    """The received traces of the run store at ``location`` (migrated by a
    :class:`~aieval.store.Store` opened first), with the requests of an earlier aieval's trace
    file (``<store>.traces.db``, or ``$AIEVAL_TRACES_DB`` for PostgreSQL) copied in, once."""
    store = ReceivedTraces(location)
    store.import_file(earlier_trace_file(location))
    return store


class TraceEvaluationRequest(BaseModel):
    """Grade stored traces: a workflow (inline, or a file inside the roots) and/or profile."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="the run's name")
    workflow: str | dict[str, Any] | None = Field(None, description="workflow definition")
    profile: str | None = Field(None, description="scoring profile id, family or file")
    trace_ids: list[str] | None = Field(
        None, description=f"the traces to grade (default: all), at most {MAX_TRACE_IDS:,}"
    )
    enforce_hard_gates: bool = True


@intake.post("/v1/traces")
async def receive_traces(request: Request) -> Response:
    """Keep one OTLP export request, every field checked; answer an
    ``ExportTraceServiceResponse``, or 400 naming the first field of the wrong shape."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in (_PROTOBUF, "application/json"):
        return _refuse(415, f"content type {kind!r}: send {_PROTOBUF} or application/json")
    try:
        import aieval.traces  # noqa: F401
    except ImportError as exc:
        return _refuse(501, str(exc))
    fmt = "json" if kind == "application/json" else "protobuf"
    state = request.app.state
    held = _Held(state.trace_bytes)
    try:
        try:
            body = await _body(request, held)
        except _TooLarge as exc:
            return _refuse(413, f"{exc}: send smaller batches")
        except _TooSlow as exc:
            return _refuse(408, str(exc), headers={"Connection": "close"})
        except _Busy as exc:
            return _busy(str(exc))
        except (ValueError, zlib.error) as exc:
            return _refuse(400, f"not an OTLP export request: {exc}")
        slots: threading.BoundedSemaphore = state.trace_intakes
        if not slots.acquire(blocking=False):  # never blocks: a count, taken on the event loop
            return _busy(f"{MAX_CONCURRENT_INTAKES} export requests are being decoded")
        try:
            # decoding a large request takes seconds: off the event loop, so others answer
            return await asyncio.to_thread(_keep, state.trace_store, body, kind, fmt)
        finally:
            slots.release()
    finally:
        held.release()


def _keep(store: ReceivedTraces, body: bytes, kind: str, fmt: str) -> Response:
    """Check and store one export request; answer it."""
    from aieval.traces import check_request, count_items

    try:
        if count_items(body, fmt, MAX_REQUEST_ITEMS) > MAX_REQUEST_ITEMS:
            raise _TooLarge(
                f"export request of more than {MAX_REQUEST_ITEMS:,} "
                f"{'JSON objects and arrays' if fmt == 'json' else 'protobuf fields'}"
            )
        counts = check_request(body, fmt)
    except _TooLarge as exc:
        return _refuse(413, f"{exc}: send smaller batches")
    except (ValueError, WorkflowError) as exc:
        return _refuse(400, f"not an OTLP export request: {exc}")
    store.add(body, fmt, counts)
    if kind == "application/json":
        return SafeJSONResponse({})
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    return Response(ExportTraceServiceResponse().SerializeToString(), media_type=_PROTOBUF)


def _busy(what: str) -> SafeJSONResponse:
    return _refuse(503, f"{what}; try again shortly", headers={"Retry-After": str(RETRY_AFTER_S)})


@traces_api.get("")
def list_traces(request: Request) -> dict[str, Any]:
    """The stored traces: id, spans received, export requests, first and last arrival."""
    store: ReceivedTraces = request.app.state.trace_store
    return {"traces": [dataclasses.asdict(t) for t in store.traces()]}


@traces_api.post("/evaluations")
def grade_traces(body: TraceEvaluationRequest, request: Request) -> dict[str, Any]:
    """Grade stored traces as one run (one sample per trace) and answer its verdicts.

    At most :data:`MAX_CONCURRENT_GRADINGS` at once (503 with ``Retry-After`` beyond), each of
    at most :data:`MAX_GRADED_SPANS` spans in :data:`MAX_TRACE_IDS` traces (400 beyond).
    """
    state = request.app.state
    if body.workflow is None and body.profile is None:
        raise ConfigError("give a workflow or a profile to grade the traces with")
    refuse_window_name("name", body.name)
    _check_trace_ids(body.trace_ids)
    slots: threading.BoundedSemaphore = state.trace_gradings
    if not slots.acquire(blocking=False):
        raise HTTPException(
            503,
            f"{MAX_CONCURRENT_GRADINGS} gradings of traces are running; try again shortly",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    try:
        return _grade(body, state)
    finally:
        slots.release()


def _check_trace_ids(trace_ids: list[str] | None) -> None:
    if trace_ids is None:
        return
    if len(trace_ids) > MAX_TRACE_IDS:
        raise HTTPException(
            400,
            f"trace_ids: {len(trace_ids):,} ids, over the limit of {MAX_TRACE_IDS:,} per "
            "grading; grade them in several requests",
        )
    for n, trace_id in enumerate(trace_ids):
        if not _TRACE_ID.fullmatch(trace_id):
            raise HTTPException(
                400, f"trace_ids[{n}]: expected 32 hex digits, got {trace_id[:80]!r}"
            )


def _grade(body: TraceEvaluationRequest, state: Any) -> dict[str, Any]:
    from aieval.runner import run
    from aieval.traces import TraceReading, runs_from_spans

    store: ReceivedTraces = state.trace_store
    wanted = None if body.trace_ids is None else [t.lower() for t in body.trace_ids]
    traces, spans = store.size(wanted)
    if spans > MAX_GRADED_SPANS or traces > MAX_TRACE_IDS:
        raise HTTPException(
            400,
            f"{'the given trace_ids' if wanted else 'the stored traces'} are {traces:,} traces "
            f"of {spans:,} spans, over the limit of {MAX_TRACE_IDS:,} traces and "
            f"{MAX_GRADED_SPANS:,} spans per grading; grade them in parts, naming trace_ids "
            "(GET /api/traces lists them with their span counts)",
        )
    reading = TraceReading()
    unreadable: list[str] = []
    runs = runs_from_spans(stored_spans(store, wanted, unreadable), reading)
    if not runs:
        which = "the given trace_ids" if wanted else "this server"
        raise ConfigError(f"trace_ids: no stored spans for {which}")
    if wanted:
        unknown = sorted(set(wanted) - {r.workflow_id for r in runs})
        if unknown:
            raise ConfigError(f"trace_ids: no stored spans for {', '.join(unknown)}")
    rows = [{"id": r.workflow_id, "input": r.inputs or {}, "run": r.to_dict()} for r in runs]
    with confined_to(state.settings.dataset_roots):
        result = run(
            name=body.name,
            dataset=rows,
            scorers=[],
            evaluator="traces",  # each row a trace's run: graded as the trace evaluator grades
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
        "unreadable_requests": unreadable,
        "verdicts": {
            s.id: {
                "grade": s.verdict.grade,
                "passed": s.verdict.passed,
                "weighted_score": s.verdict.weighted_score,
                # which share of the weights the score covers, the unscored criteria named
                "score_coverage": (s.verdict.workflow or {}).get("score_coverage"),
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


class _TooSlow(Exception):
    pass


class _Busy(Exception):
    pass


class IntakeBytes:
    """The bytes all export requests being received hold, bounded by ``limit``; a request
    takes its share piece by piece as its body arrives (on the event loop, so no lock)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held -= size


class _Held:
    """One request's share of :class:`IntakeBytes`, given back once when it is answered."""

    def __init__(self, budget: IntakeBytes) -> None:
        self.budget = budget
        self.size = 0

    def grow_to(self, size: int) -> None:
        if size > self.size:
            if not self.budget.take(size - self.size):
                raise _Busy(
                    f"export requests being received hold {self.budget.limit:,} bytes, "
                    "the most at once"
                )
            self.size = size

    def release(self) -> None:
        self.budget.give(self.size)
        self.size = 0


async def _body(request: Request, held: _Held) -> bytes:
    """The body, decompressed in bounded pieces as it arrives: neither the bytes received nor
    those decompressed ever exceed :data:`MAX_REQUEST_BYTES` in memory, and ``held`` grows
    with them. It must arrive within :data:`BODY_GRACE_S` seconds plus one per
    :data:`MIN_BODY_RATE` bytes received.

    Raises:
        _TooLarge: more bytes than that, received or decompressed.
        _TooSlow: a body arriving slower than that.
        _Busy: the requests being received hold :data:`MAX_INTAKE_BYTES` already.
        ValueError, zlib.error: an unknown encoding, or a body that is not one.
    """
    limit = MAX_REQUEST_BYTES
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _TooLarge(f"export request of {int(declared):,} bytes, over {limit:,}")
    inflater = _Inflater(request.headers.get("content-encoding", ""), limit)
    received = 0
    start = time.monotonic()
    chunks = request.stream().__aiter__()
    while True:
        left = start + BODY_GRACE_S + received / MIN_BODY_RATE - time.monotonic()
        try:
            chunk = await asyncio.wait_for(chunks.__anext__(), max(left, 0.0))
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise _TooSlow(
                f"the request body arrived too slowly ({received:,} bytes in "
                f"{time.monotonic() - start:.0f} s): a body may take {BODY_GRACE_S:g} s plus "
                f"one per {MIN_BODY_RATE:,} bytes"
            ) from None
        received += len(chunk)
        if received > limit:
            raise _TooLarge(f"export request of more than {limit:,} bytes")
        held.grow_to(received)
        inflater.feed(chunk)
        held.grow_to(inflater.size)
    body = inflater.finish()
    held.grow_to(len(body))
    return body


class _Inflater:
    """A gzip (one or more members) or deflate stream decompressed piece by piece, refusing
    output beyond ``limit`` as soon as it is reached (a small bomb never inflates whole)."""

    def __init__(self, encoding: str, limit: int) -> None:
        encoding = encoding.strip().lower()
        wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
        if encoding not in ("", "identity", *wbits):
            raise ValueError(f"content encoding {encoding!r} is not supported (gzip, deflate)")
        self._encoding = encoding
        self._wbits = wbits.get(encoding)
        self._inflate = None if self._wbits is None else zlib.decompressobj(self._wbits)
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, data: bytes) -> None:
        if self._inflate is None or self._wbits is None:
            self._keep(data)
            return
        while data:
            if self._inflate.eof:
                if self._encoding != "gzip":
                    raise ValueError("data after the end of the deflate stream")
                self._inflate = zlib.decompressobj(self._wbits)  # the next gzip member
            self._keep(self._inflate.decompress(data, self._limit - self._size + 1))
            data = self._inflate.unused_data if self._inflate.eof else self._inflate.unconsumed_tail

    def finish(self) -> bytes:
        if self._inflate is not None:
            self._keep(self._inflate.flush(self._limit - self._size + 1))
            if not self._inflate.eof:
                raise ValueError(f"the {self._encoding} body ends before its end-of-stream mark")
        return b"".join(self._parts)

    @property
    def size(self) -> int:
        """Bytes decompressed so far."""
        return self._size

    def _keep(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._limit:
            raise _TooLarge(f"export request decompressing to more than {self._limit:,} bytes")
        self._parts.append(data)


def _refuse(status: int, message: str, headers: dict[str, str] | None = None) -> SafeJSONResponse:
    return SafeJSONResponse(
        {"message": message, "reasons": []}, status_code=status, headers=headers
    )
