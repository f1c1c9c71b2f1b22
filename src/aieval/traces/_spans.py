"""Spans decoded from OTLP export requests (JSON objects or protobuf messages).

Only what the mapping reads is kept: ids, name, times, status, attributes, the exception
events' messages and the counts of what the exporter dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import msgspec

from aieval.errors import DatasetError, WorkflowError
from aieval.traces import _otlpjson as J

__all__ = ["STATUS_ERROR", "Span", "spans_from_bytes", "spans_from_json", "spans_from_proto"]

#: ``Status.code`` of a failed span (0 unset, 1 ok).
STATUS_ERROR = 2


class Span:
    """One span as the trace reader keeps it; its attributes and exception events are decoded
    when first read (grouping needs only ids and times).

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

    __slots__ = (
        "_attributes",
        "_exceptions",
        "_raw",
        "_size",
        "dropped",
        "end_ns",
        "name",
        "parent_id",
        "service",
        "span_id",
        "start_ns",
        "status",
        "status_message",
        "trace_id",
    )

    def __init__(
        self,
        trace_id: str,
        span_id: str,
        parent_id: str,
        name: str,
        start_ns: int,
        end_ns: int,
        status: int = 0,
        status_message: str = "",
        attributes: dict[str, Any] | None = None,
        exceptions: list[str] | None = None,
        dropped: dict[str, int] | None = None,
        service: str = "",
        raw: tuple[Callable[[Any], tuple[dict[str, Any], list[str]]], Any] | None = None,
    ) -> None:
        self.trace_id, self.span_id, self.parent_id, self.name = trace_id, span_id, parent_id, name
        self.start_ns, self.end_ns = start_ns, end_ns
        self.status, self.status_message = status, status_message
        self._attributes: dict[str, Any] = attributes or {}
        self._exceptions: list[str] = exceptions or []
        self.dropped = dropped or {}
        self.service = service
        self._raw = raw
        self._size = _SPAN_BYTES

    @property
    def attributes(self) -> dict[str, Any]:
        if self._raw is not None:
            self._decode()
        return self._attributes

    @property
    def exceptions(self) -> list[str]:
        if self._raw is not None:
            self._decode()
        return self._exceptions

    def _decode(self) -> None:
        assert self._raw is not None
        decoder, raw = self._raw
        try:
            self._attributes, self._exceptions = decoder(raw)
        except (msgspec.DecodeError, ValueError, TypeError, RecursionError) as exc:
            where = raw[2] if isinstance(raw, tuple) else "a protobuf export request"
            raise DatasetError(
                f"{where}: span {self.name!r} ({self.span_id}) cannot be read: {exc}"
            ) from None
        self._raw = None

    def forget_details(self) -> None:
        """Read the span as having no attributes or events (its own could not be read)."""
        self._raw = None
        self._attributes, self._exceptions = {}, []

    def __getstate__(self) -> tuple[Any, ...]:
        # undecoded details travel as they arrived (raw JSON, a protobuf message): pickling
        # (the grouping's spill) must not pay for decoding every attribute
        return (
            self.trace_id,
            self.span_id,
            self.parent_id,
            self.name,
            self.start_ns,
            self.end_ns,
            self.status,
            self.status_message,
            self._attributes,
            self._exceptions,
            self.dropped,
            self.service,
            self._raw,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"Span({self.name!r}, trace {self.trace_id}, span {self.span_id})"


#: What a span holds in memory beyond its share of the encoded request, about (its object,
#: ids and name as strings, the references to its raw details); see :func:`held_bytes`.
_SPAN_BYTES = 300
#: A protobuf request decodes into about twice its encoded size (its messages' arena).
_PROTO_FACTOR = 2
#: JSON decoded into dicts and lists takes about three times its text.
_DICT_FACTOR = 3


def held_bytes(span: Span) -> int:
    """About how many bytes holding ``span`` keeps in memory: its share of the export request it
    came in (whose buffer its undecoded details point into) and its own objects."""
    return span._size


def _share(spans: list[Span], encoded: int) -> None:
    each = _SPAN_BYTES + encoded // max(len(spans), 1)
    for span in spans:
        span._size = each


# ---- OTLP/JSON ------------------------------------------------------------------------------


def spans_from_bytes(data: bytes | str, where: str) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP/JSON text.

    Raises:
        WorkflowError: not JSON, or not an export request (names ``where`` and why).
    """
    try:
        request = J.decode_request(data)
    except msgspec.DecodeError as exc:
        raise WorkflowError(f"{where}: not valid OTLP/JSON: {exc}") from None
    except RecursionError:
        raise WorkflowError(f"{where}: nested deeper than the JSON decoder goes") from None
    raw = data.encode() if isinstance(data, str) else data
    if not request.resource_spans and b'"resource_spans"' in raw:  # snake_case keys
        try:
            loaded = json.loads(raw)
        except RecursionError:
            raise WorkflowError(f"{where}: nested deeper than the JSON decoder goes") from None
        decoded = list(spans_from_json(loaded, where))
        _share(decoded, len(raw) * _DICT_FACTOR)
        yield from decoded
        return
    spans: list[Span] = []
    for resource_spans in request.resource_spans:
        service = ""
        if resource_spans.resource is not None:
            for kv in resource_spans.resource.attributes:
                if kv.key == "service.name":
                    service = str(J.value(kv.value))
        for scope_spans in resource_spans.scope_spans:
            spans.extend(_typed_span(raw_span, service, where) for raw_span in scope_spans.spans)
    _share(spans, len(raw))
    yield from spans


def _dropped(attributes: int, events: int) -> dict[str, int]:
    """The exporter's drop counts by kind, only the non-zero ones."""
    return {kind: n for kind, n in (("attributes", attributes), ("events", events)) if n}


def _typed_span(raw: J.Span, service: str, where: str) -> Span:
    # once per span of every file: the common case (hex ids, integer or numeric-string times,
    # an integer status code) takes no function call beyond the constructor
    dropped = None
    if raw.dropped_attributes_count or raw.dropped_events_count:
        dropped = _dropped(raw.dropped_attributes_count, raw.dropped_events_count)
    trace_id, span_id, parent = raw.trace_id, raw.span_id, raw.parent_span_id
    if (
        len(trace_id) != 32
        or len(span_id) != 16
        or (parent and len(parent) != 16)
        or not _HEX.fullmatch(trace_id + span_id + parent)
    ):
        trace_id = _json_id(trace_id, 16, where, "traceId")
        span_id = _json_id(span_id, 8, where, "spanId")
        parent = _json_id(parent, 8, where, "parentSpanId") if parent else ""
    raw_start, raw_end = raw.start_time_unix_nano, raw.end_time_unix_nano
    try:
        start, end = int(raw_start), int(raw_end)
    except ValueError:
        start, end = _int(raw_start, where), _int(raw_end, where)
    if not (0 <= start <= _MAX_TIME and 0 <= end <= _MAX_TIME):
        start, end = _int(raw_start, where), _int(raw_end, where)
    status, code, message = raw.status, 0, ""
    if status is not None:
        code = status.code if type(status.code) is int else _status_code(status.code)
        message = status.message
    return Span(
        trace_id.lower(),
        span_id.lower(),
        parent.lower(),
        raw.name,
        start,
        end,
        code,
        message,
        dropped=dropped,
        service=service,
        raw=(_typed_details, (raw.attributes, raw.events, where)),
    )


def _typed_details(
    raw: tuple[msgspec.Raw, msgspec.Raw, str],
) -> tuple[dict[str, Any], list[str]]:
    raw_attributes, raw_events, _ = raw
    try:
        attributes = {kv.key: J.value(kv.value) for kv in J.attributes(raw_attributes)}
    except (msgspec.DecodeError, ValueError, TypeError) as exc:
        raise ValueError(f"attributes: {exc}") from None
    try:
        exceptions = [
            _exception_text({kv.key: J.value(kv.value) for kv in e.attributes})
            for e in J.events(raw_events)
            if e.name == "exception"
        ]
    except (msgspec.DecodeError, ValueError, TypeError) as exc:
        raise ValueError(f"events: {exc}") from None
    return attributes, exceptions


def spans_from_json(request: Any, where: str) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP/JSON (camelCase or snake_case)."""
    if not isinstance(request, Mapping):
        raise WorkflowError(f"{where}: expected an OTLP export request object")
    for resource_spans in _list(request, "resourceSpans", "resource_spans", where):
        resource = resource_spans.get("resource") or {}
        service = _json_attributes(resource.get("attributes"), where).get("service.name", "")
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans", where):
            for raw in _list(scope_spans, "spans", "spans", where):
                try:
                    yield _json_span(raw, str(service), where)
                except (AttributeError, TypeError, ValueError, RecursionError) as exc:
                    name = raw.get("name") if isinstance(raw, Mapping) else None
                    raise WorkflowError(
                        f"{where}: span {name!r} cannot be read: {type(exc).__name__}: {exc}"
                    ) from None


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


_HEX = re.compile(r"[0-9a-fA-F]*")

#: OTLP times are fixed64 nanoseconds since the epoch.
_MAX_TIME = 2**64 - 1


def _int(value: Any, where: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise WorkflowError(f"{where}: expected an integer time, got {value!r}") from None
    if not 0 <= number <= _MAX_TIME:
        raise WorkflowError(
            f"{where}: time {value!r} is outside OTLP's range (0 to 2**64-1 nanoseconds)"
        )
    return number


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


def spans_from_proto(
    request: Any, encoded_size: int | None = None, where: str = "protobuf export request"
) -> Iterator[Span]:
    """The spans of one protobuf ``ExportTraceServiceRequest``; ``encoded_size``: its size in
    bytes when known (it sizes the spans' memory estimate; else it is measured).

    Raises:
        WorkflowError: a trace or span id of the wrong size (names ``where`` and the span).
    """
    spans = list(_proto_spans(request, where))
    size = request.ByteSize() if encoded_size is None else encoded_size
    _share(spans, size * _PROTO_FACTOR)
    yield from spans


def _proto_spans(request: Any, where: str) -> Iterator[Span]:
    for resource_spans in request.resource_spans:
        service = ""
        for kv in resource_spans.resource.attributes:
            if kv.key == "service.name":
                service = str(_proto_value(kv.value))
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                if (
                    len(raw.trace_id) != 16
                    or len(raw.span_id) != 8
                    or len(raw.parent_span_id) not in (0, 8)
                ):
                    raise WorkflowError(
                        f"{where}: span {raw.name!r}: trace, span and parent ids must be 16, 8 "
                        f"and 8 bytes, got {len(raw.trace_id)}, {len(raw.span_id)} and "
                        f"{len(raw.parent_span_id)}"
                    )
                dropped = None
                if raw.dropped_attributes_count or raw.dropped_events_count:
                    dropped = _dropped(raw.dropped_attributes_count, raw.dropped_events_count)
                yield Span(
                    raw.trace_id.hex(),
                    raw.span_id.hex(),
                    raw.parent_span_id.hex(),
                    raw.name,
                    raw.start_time_unix_nano,
                    raw.end_time_unix_nano,
                    raw.status.code,
                    raw.status.message,
                    dropped=dropped,
                    service=service,
                    raw=(_proto_details, raw),
                )


def _proto_details(raw: Any) -> tuple[dict[str, Any], list[str]]:
    attributes = {kv.key: _proto_value(kv.value) for kv in raw.attributes}
    exceptions = [
        _exception_text({kv.key: _proto_value(kv.value) for kv in e.attributes})
        for e in raw.events
        if e.name == "exception"
    ]
    return attributes, exceptions


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
