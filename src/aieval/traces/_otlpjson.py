"""Typed OTLP/JSON decoding with msgspec: an export request line straight into structs (camelCase
keys as the OTLP/JSON encoding and the collector write them), far faster than ``json.loads``
into dicts. Unknown fields are ignored; a value of the wrong type is an error. The structs hold
no cycles, so the garbage collector does not track them (``gc=False``)."""

from __future__ import annotations

import msgspec

__all__ = ["Request", "attributes", "decode_request", "events", "value"]


class AnyValue(msgspec.Struct, rename="camel", omit_defaults=True, gc=False):
    string_value: str | None = None
    bool_value: bool | None = None
    int_value: int | str | None = None
    double_value: float | int | str | None = None
    array_value: ArrayValue | None = None
    kvlist_value: KvList | None = None
    bytes_value: str | None = None


class KeyValue(msgspec.Struct, gc=False):
    key: str
    value: AnyValue | None = None


class ArrayValue(msgspec.Struct, gc=False):
    values: list[AnyValue] = []


class KvList(msgspec.Struct, gc=False):
    values: list[KeyValue] = []


class Event(msgspec.Struct, gc=False):
    name: str = ""
    attributes: list[KeyValue] = []


class Status(msgspec.Struct, gc=False):
    code: int | str = 0
    message: str = ""


class Span(msgspec.Struct, rename="camel", gc=False):
    trace_id: str = ""
    span_id: str = ""
    parent_span_id: str = ""
    name: str = ""
    start_time_unix_nano: int | str = 0
    end_time_unix_nano: int | str = 0
    # kept as raw JSON, decoded when the mapping reads them (grouping does not)
    attributes: msgspec.Raw = msgspec.Raw(b"[]")
    events: msgspec.Raw = msgspec.Raw(b"[]")
    status: Status | None = None
    dropped_attributes_count: int = 0
    dropped_events_count: int = 0
    dropped_links_count: int = 0


class ScopeSpans(msgspec.Struct, gc=False):
    spans: list[Span] = []


class Resource(msgspec.Struct, gc=False):
    attributes: list[KeyValue] = []


class ResourceSpans(msgspec.Struct, rename="camel", gc=False):
    resource: Resource | None = None
    scope_spans: list[ScopeSpans] = []


class Request(msgspec.Struct, rename="camel", gc=False):
    resource_spans: list[ResourceSpans] = []


_DECODER = msgspec.json.Decoder(Request)
_ATTRIBUTES = msgspec.json.Decoder(list[KeyValue])
_EVENTS = msgspec.json.Decoder(list[Event])


def decode_request(data: bytes | str) -> Request:
    """One export request.

    Raises:
        msgspec.DecodeError: not JSON, or a field of the wrong type (a ``ValueError``).
    """
    return _DECODER.decode(data)


def attributes(raw: msgspec.Raw) -> list[KeyValue]:
    """A span's attributes, from their raw JSON."""
    return _ATTRIBUTES.decode(raw)


def events(raw: msgspec.Raw) -> list[Event]:
    """A span's events, from their raw JSON."""
    return _EVENTS.decode(raw)


def value(item: AnyValue | None) -> object:
    """The Python value of an attribute value."""
    if item is None:
        return None
    if item.string_value is not None:
        return item.string_value
    if item.int_value is not None:
        return int(item.int_value)
    if item.bool_value is not None:
        return item.bool_value
    if item.double_value is not None:
        return float(item.double_value)
    if item.array_value is not None:
        return [value(v) for v in item.array_value.values]
    if item.kvlist_value is not None:
        return {kv.key: value(kv.value) for kv in item.kvlist_value.values}
    return item.bytes_value
