"""Checking an OTLP export request at the door (``POST /v1/traces``) before it is kept.

Two steps, both before anything is stored:

* :func:`count_items` bounds what decoding would build: the JSON objects and arrays of an
  OTLP/JSON body (its ``{`` and ``[``, those in strings too: an upper bound, counted at C speed),
  or the messages and fields of a protobuf body (walked over its wire format, never decoded).
  Decoding takes memory in proportion to them, not to the body's bytes: 8 MiB of empty spans
  decode to hundreds of MiB.
* :func:`check_request` decodes every field strictly, the attributes and events too, and
  answers the spans per trace id; a field of the wrong shape is a :class:`WorkflowError`
  naming its path (``resourceSpans[0].scopeSpans[1].spans[3].attributes: expected an array,
  got an object``). Ids must be lowercase or uppercase hex of their size (trace 16 bytes, span
  8), in JSON as in protobuf, and not all zeros (OTLP calls that id invalid: the request is
  refused naming the span, as an id of the wrong size is), so nothing stored ever holds an id
  that is not one.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec

from aieval.errors import WorkflowError
from aieval.traces import _otlpjson as J

__all__ = ["MAX_VALUE_DEPTH", "check_request", "count_items"]

#: How deep attribute values may nest (an ``arrayValue`` or ``kvlistValue`` in another is one
#: level more; a plain value is level 1): deeper, the export request is refused, naming the
#: attribute. Protobuf's parser stops a little deeper on its own (100 nested messages).
MAX_VALUE_DEPTH = 32

_HEX = re.compile(r"[0-9a-fA-F]*")
_STATUS_NAMES = ("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")


def count_items(body: bytes, fmt: str, limit: int) -> int:
    """How many objects and arrays (JSON) or messages and fields (protobuf) ``body`` holds, an
    upper bound; the count stops a little over ``limit`` (the caller refuses such a body)."""
    if fmt == "json":
        return body.count(b"{") + body.count(b"[")
    if len(body) // 2 <= limit:  # every field takes two bytes at least
        return len(body) // 2
    return _proto_items(body, limit)


def check_request(body: bytes, fmt: str) -> dict[str, int]:
    """Spans per trace id of one export request, every field checked.

    Raises:
        WorkflowError: a body that is not an export request, or a field of the wrong shape
            (names the field's path and what was expected).
    """
    # up to a million new objects, none in a cycle: collection passes would only re-scan them
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_json(body) if fmt == "json" else _check_proto(body)
    finally:
        if enabled:
            gc.enable()


# ---- OTLP/JSON ------------------------------------------------------------------------------


class _Span(msgspec.Struct, rename="camel", gc=False):
    trace_id: str
    span_id: str
    parent_span_id: str = ""
    name: str = ""
    start_time_unix_nano: int | str = 0
    end_time_unix_nano: int | str = 0
    attributes: list[J.KeyValue] = []
    events: list[J.Event] = []
    status: J.Status | None = None
    dropped_attributes_count: int = 0
    dropped_events_count: int = 0
    dropped_links_count: int = 0


class _ScopeSpans(msgspec.Struct, gc=False):
    spans: list[_Span] = []


class _ResourceSpans(msgspec.Struct, rename="camel", gc=False):
    resource: J.Resource | None = None
    scope_spans: list[_ScopeSpans] = []


class _Request(msgspec.Struct, rename="camel", gc=False):
    resource_spans: list[_ResourceSpans] = []


_DECODER = msgspec.json.Decoder(_Request)


def _check_json(body: bytes) -> dict[str, int]:
    try:
        request = _DECODER.decode(body)
    except msgspec.ValidationError as exc:
        raise WorkflowError(_at(str(exc))) from None
    except msgspec.DecodeError as exc:
        raise WorkflowError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise WorkflowError(_too_deep(body)) from None
    if not request.resource_spans and b'"resource_spans"' in body:
        raise WorkflowError(
            "resource_spans: OTLP/JSON keys are lowerCamelCase (resourceSpans, scopeSpans, "
            "traceId, ...); snake_case keys are read from trace files only"
        )
    counts: dict[str, int] = {}
    for r, resource_spans in enumerate(request.resource_spans):
        if resource_spans.resource is not None:
            _values(resource_spans.resource.attributes, f"resourceSpans[{r}].resource.attributes")
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for i, span in enumerate(scope_spans.spans):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                trace_id = _span_fields(span, where)
                counts[trace_id] = counts.get(trace_id, 0) + 1
    return counts


#: JSON tokens that nest or count: strings (keys end with ``:``), brackets and commas.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:?|[\[\]{},]')
#: JSON nesting no valid request reaches (:data:`MAX_VALUE_DEPTH` values take 4 levels each).
_DEEPEST_JSON = 4 * MAX_VALUE_DEPTH + 16


def _too_deep(body: bytes) -> str:
    """Why a body nested deeper than the decoder goes is refused, naming the attribute (or the
    path) where it first goes deeper than any valid request: its tokens are walked (never
    decoded), keeping the path of keys and indices down to there."""
    why = f"nested deeper than the decoder goes (attribute values nest at most {MAX_VALUE_DEPTH})"
    path: list[list[Any]] = []  # per open container: [key or None] or [index] for an array
    for token in _TOKENS.finditer(body):
        text = token.group()
        first = text[:1]
        if first == b"{":
            path.append([None])
        elif first == b"[":
            path.append([0])
        elif first in (b"}", b"]"):
            if path:
                path.pop()
        elif first == b",":
            if path and isinstance(path[-1][0], int):
                path[-1][0] += 1
        elif text.endswith(b":") and path:
            path[-1][0] = text.rstrip(b": \t\r\n")[1:-1].decode("utf-8", "replace")
        if len(path) > _DEEPEST_JSON:
            return f"{_json_path(path)}: {why}"
    return f"the request is {why}"


def _json_path(path: list[list[Any]]) -> str:
    """``a[0].b`` of a walked path, cut after the attribute value it is in, if any."""
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for (p,) in path if p is not None]
    text = "".join(parts).removeprefix(".")
    attributes = text.find("attributes[")
    value = text.find(".value", attributes) if attributes >= 0 else -1
    return text[: value + len(".value")] if value >= 0 else text[:200]


def _at(message: str) -> str:
    """msgspec's ``Expected ... - at `$.a[0].b``` as ``a[0].b: expected ...``."""
    text, sep, path = message.rpartition(" - at `")
    if not sep:
        return message
    return f"{path.rstrip('`').removeprefix('$.').removeprefix('$')}: {text[:1].lower()}{text[1:]}"


def _span_fields(span: _Span, where: str) -> str:
    trace_id = _nonzero(_hex_id(span.trace_id, 16, f"{where}.traceId"), f"{where}.traceId")
    _nonzero(_hex_id(span.span_id, 8, f"{where}.spanId"), f"{where}.spanId")
    if span.parent_span_id:
        _hex_id(span.parent_span_id, 8, f"{where}.parentSpanId")
    for name, raw in (
        ("startTimeUnixNano", span.start_time_unix_nano),
        ("endTimeUnixNano", span.end_time_unix_nano),
    ):
        _time(raw, f"{where}.{name}")
    if span.status is not None:
        _status(span.status.code, f"{where}.status.code")
    _values(span.attributes, f"{where}.attributes")
    for e, event in enumerate(span.events):
        _values(event.attributes, f"{where}.events[{e}].attributes")
    return trace_id.lower()


def _hex_id(value: str, size: int, where: str) -> str:
    if len(value) != 2 * size or not _HEX.fullmatch(value):
        raise WorkflowError(
            f"{where}: expected {_a(size)}-byte id as {2 * size} hex digits, got {value[:80]!r}"
        )
    return value


def _time(raw: int | str, where: str) -> None:
    try:
        number = int(raw)
    except ValueError:
        raise WorkflowError(
            f"{where}: expected nanoseconds as a whole number, got {raw!r}"
        ) from None
    if not 0 <= number <= 2**64 - 1:
        raise WorkflowError(f"{where}: {raw!r} is outside OTLP's range (0 to 2**64-1)")


def _status(code: int | str, where: str) -> None:
    if code not in (0, 1, 2) and code not in _STATUS_NAMES:
        raise WorkflowError(f"{where}: expected 0, 1, 2 or a STATUS_CODE_ name, got {code!r}")


def _values(items: Iterable[J.KeyValue], where: str) -> None:
    """Every attribute value, nested ones too, is one the mapping can read."""
    stack: list[tuple[J.AnyValue | None, str, int]] = [
        (kv.value, f"{where}[{n}].value", 1) for n, kv in enumerate(items)
    ]
    while stack:
        item, at, depth = stack.pop()
        if item is None:
            continue
        if depth > MAX_VALUE_DEPTH:
            raise WorkflowError(
                f"{at.split('.value', 1)[0]}.value: nested deeper than {MAX_VALUE_DEPTH} levels "
                "(arrayValue and kvlistValue in one another); send it flatter, or as a string"
            )
        if item.int_value is not None and isinstance(item.int_value, str):
            try:
                int(item.int_value)
            except ValueError:
                raise WorkflowError(
                    f"{at}.intValue: expected a whole number, got {item.int_value[:80]!r}"
                ) from None
        if isinstance(item.double_value, str):
            try:
                float(item.double_value)
            except ValueError:
                raise WorkflowError(
                    f"{at}.doubleValue: expected a number, got {item.double_value[:80]!r}"
                ) from None
        if item.array_value is not None:
            stack.extend(
                (v, f"{at}.arrayValue.values[{n}]", depth + 1)
                for n, v in enumerate(item.array_value.values)
            )
        if item.kvlist_value is not None:
            stack.extend(
                (kv.value, f"{at}.kvlistValue.values[{n}].value", depth + 1)
                for n, kv in enumerate(item.kvlist_value.values)
            )


# ---- OTLP/protobuf --------------------------------------------------------------------------


def _check_proto(body: bytes) -> dict[str, int]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise WorkflowError(f"not an OTLP ExportTraceServiceRequest: {exc}") from None
    counts: dict[str, int] = {}
    for r, resource_spans in enumerate(request.resource_spans):
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for i, span in enumerate(scope_spans.spans):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                _bytes_id(span.trace_id, 16, f"{where}.traceId")
                _nonzero(span.trace_id.hex(), f"{where}.traceId")
                _bytes_id(span.span_id, 8, f"{where}.spanId")
                _nonzero(span.span_id.hex(), f"{where}.spanId")
                if span.parent_span_id:
                    _bytes_id(span.parent_span_id, 8, f"{where}.parentSpanId")
                if span.status.code not in (0, 1, 2):
                    raise WorkflowError(
                        f"{where}.status.code: expected 0, 1 or 2, got {span.status.code}"
                    )
                trace_id = span.trace_id.hex()
                counts[trace_id] = counts.get(trace_id, 0) + 1
    return counts


def _nonzero(hex_id: str, where: str) -> str:
    """``hex_id`` unless it is all zeros, which OTLP calls invalid (an id of no trace or span:
    every such span would share one trace)."""
    if not hex_id.strip("0"):
        raise WorkflowError(
            f"{where}: the all-zero id is invalid (OTLP): give each trace and "
            "span a random non-zero id"
        )
    return hex_id


def _bytes_id(value: bytes, size: int, where: str) -> None:
    if len(value) != size:
        raise WorkflowError(f"{where}: expected {_a(size)}-byte id, got {len(value)} byte(s)")


def _a(size: int) -> str:
    return f"an {size}" if size == 8 else f"a {size}"


def _proto_items(body: bytes, limit: int) -> int:
    """Messages and fields of an export request, walked over the wire format (each nested
    message by the request's own descriptors), stopping once over ``limit``. A body that is
    not valid protobuf stops the walk early: parsing it then says why."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    count = 0
    stack = [(ExportTraceServiceRequest.DESCRIPTOR, 0, len(body))]
    while stack and count <= limit:
        descriptor, pos, end = stack.pop()
        children = _message_fields(descriptor)
        count += 1
        while pos < end and count <= limit:
            key, pos = _varint(body, pos)
            wire = key & 7
            count += 1
            if wire == 0:
                _, pos = _varint(body, pos)
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 2:
                size, pos = _varint(body, pos)
                child = children.get(key >> 3)
                if child is not None and pos + size <= end:
                    stack.append((child, pos, pos + size))
                pos += size
            else:
                return count
    return count


@cache
def _message_fields(descriptor: Any) -> dict[int, Any]:
    return {f.number: f.message_type for f in descriptor.fields if f.message_type is not None}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    return value, len(data) + 1
