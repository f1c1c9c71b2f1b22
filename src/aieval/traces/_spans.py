"""Spans decoded from OTLP export requests (JSON objects or protobuf messages).

Only what the mapping reads is kept: ids, name, times, status, attributes, the exception
events' messages and the counts of what the exporter dropped.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval.errors import WorkflowError

__all__ = ["STATUS_ERROR", "Span", "spans_from_json", "spans_from_proto"]

#: ``Status.code`` of a failed span (0 unset, 1 ok).
STATUS_ERROR = 2


@dataclass(slots=True)
class Span:
    """One span as the trace reader keeps it.

    Attributes:
        trace_id: the trace id in lowercase hex.
        span_id: the span id in lowercase hex.
        parent_id: the parent span's id, ``""`` for a root span.
        name: the span name.
        start_ns: start, in nanoseconds since the epoch.
        end_ns: end in nanoseconds; ``0`` while the span is still open.
        status: the status code (0 unset, 1 ok, 2 error).
        status_message: the status description.
        attributes: the span's attributes (arrays as lists, key-value lists as dicts).
        exceptions: messages of the span's ``exception`` events.
        dropped: attributes, events and links the exporter dropped, by kind (only the non-zero).
        service: the resource's ``service.name``.
    """

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    status: int = 0
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    exceptions: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    service: str = ""


# ---- OTLP/JSON ------------------------------------------------------------------------------


def spans_from_json(request: Any, where: str) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP/JSON (camelCase or snake_case)."""
    if not isinstance(request, Mapping):
        raise WorkflowError(f"{where}: expected an OTLP export request object")
    for resource_spans in _list(request, "resourceSpans", "resource_spans", where):
        resource = resource_spans.get("resource") or {}
        service = _json_attributes(resource.get("attributes"), where).get("service.name", "")
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans", where):
            for raw in _list(scope_spans, "spans", "spans", where):
                yield _json_span(raw, str(service), where)


def _list(data: Mapping[str, Any], camel: str, snake: str, where: str) -> list[Any]:
    value = data.get(camel, data.get(snake))
    if value is None:
        return []
    if not isinstance(value, list):
        raise WorkflowError(f"{where}: field {camel!r} must be a list")
    return value


def _json_span(raw: Any, service: str, where: str) -> Span:
    if not isinstance(raw, Mapping):
        raise WorkflowError(f"{where}: a span must be an object")
    get = raw.get
    trace_id = _json_id(get("traceId", get("trace_id")), 16, where, "traceId")
    span_id = _json_id(get("spanId", get("span_id")), 8, where, "spanId")
    parent = get("parentSpanId", get("parent_span_id"))
    status = get("status") or {}
    dropped = {
        kind: int(n)
        for kind, n in (
            ("attributes", get("droppedAttributesCount", 0)),
            ("events", get("droppedEventsCount", 0)),
            ("links", get("droppedLinksCount", 0)),
        )
        if n
    }
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_json_id(parent, 8, where, "parentSpanId") if parent else "",
        name=str(get("name", "")),
        start_ns=_int(get("startTimeUnixNano", get("start_time_unix_nano", 0)), where),
        end_ns=_int(get("endTimeUnixNano", get("end_time_unix_nano", 0)), where),
        status=_status_code(status.get("code", 0)),
        status_message=str(status.get("message", "")),
        attributes=_json_attributes(get("attributes"), where),
        exceptions=_json_exceptions(get("events"), where),
        dropped=dropped,
        service=service,
    )


def _json_id(value: Any, size: int, where: str, name: str) -> str:
    """A hex id (the OTLP/JSON encoding), or base64 as protobuf's JSON mapping writes it."""
    if not isinstance(value, str) or not value:
        raise WorkflowError(f"{where}: span field {name!r} is missing")
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise WorkflowError(f"{where}: span field {name!r} is not a {size}-byte id: {value!r}")
    return raw.hex()


def _int(value: Any, where: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise WorkflowError(f"{where}: expected an integer time, got {value!r}") from None


def _status_code(code: Any) -> int:
    if isinstance(code, str):  # protobuf's JSON mapping writes enum names
        return {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, 0)
    return int(code or 0)


def _json_attributes(items: Any, where: str) -> dict[str, Any]:
    if not items:
        return {}
    if not isinstance(items, list):
        raise WorkflowError(f"{where}: field 'attributes' must be a list")
    return {str(item.get("key")): _json_value(item.get("value")) for item in items}


def _json_value(value: Any) -> Any:
    if not isinstance(value, Mapping) or not value:
        return None
    for kind, raw in value.items():
        if kind in ("stringValue", "string_value", "boolValue", "bool_value"):
            return raw
        if kind in ("intValue", "int_value"):
            return int(raw)
        if kind in ("doubleValue", "double_value"):
            return float(raw)
        if kind in ("arrayValue", "array_value"):
            return [_json_value(v) for v in (raw or {}).get("values", [])]
        if kind in ("kvlistValue", "kvlist_value"):
            return {str(i.get("key")): _json_value(i.get("value")) for i in raw.get("values", [])}
        if kind in ("bytesValue", "bytes_value"):
            return raw
    return None


def _json_exceptions(events: Any, where: str) -> list[str]:
    if not events:
        return []
    found = []
    for event in events:
        if isinstance(event, Mapping) and event.get("name") == "exception":
            attrs = _json_attributes(event.get("attributes"), where)
            found.append(_exception_text(attrs))
    return found


def _exception_text(attrs: Mapping[str, Any]) -> str:
    kind, message = attrs.get("exception.type"), attrs.get("exception.message")
    return ": ".join(str(p) for p in (kind, message) if p) or "exception"


# ---- OTLP/protobuf --------------------------------------------------------------------------


def spans_from_proto(request: Any) -> Iterator[Span]:
    """The spans of one protobuf ``ExportTraceServiceRequest``."""
    for resource_spans in request.resource_spans:
        service = ""
        for kv in resource_spans.resource.attributes:
            if kv.key == "service.name":
                service = str(_proto_value(kv.value))
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                dropped = {
                    kind: n
                    for kind, n in (
                        ("attributes", raw.dropped_attributes_count),
                        ("events", raw.dropped_events_count),
                        ("links", raw.dropped_links_count),
                    )
                    if n
                }
                yield Span(
                    trace_id=raw.trace_id.hex(),
                    span_id=raw.span_id.hex(),
                    parent_id=raw.parent_span_id.hex(),
                    name=raw.name,
                    start_ns=raw.start_time_unix_nano,
                    end_ns=raw.end_time_unix_nano,
                    status=raw.status.code,
                    status_message=raw.status.message,
                    attributes={kv.key: _proto_value(kv.value) for kv in raw.attributes},
                    exceptions=[
                        _exception_text({kv.key: _proto_value(kv.value) for kv in e.attributes})
                        for e in raw.events
                        if e.name == "exception"
                    ],
                    dropped=dropped,
                    service=service,
                )


def _proto_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_proto_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _proto_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind)
