"""``POST /v1/traces`` against hostile bodies, through the real server on loopback: bombs stop
at the limit, every field is checked at the door (400 naming it), ids are hex of their size,
and grading bounds its size and its concurrency; one bad span never breaks other traces."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import tracemalloc
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from tests.support.server import LiveServer
from tests.traces._definition import DEFINITION
from tests.traces._produce import Produced

from aieval.server import ServerSettings, _traces, create_app
from aieval.traces import count_items
from aieval.traces._intake import _proto_items

TOKEN = "s3cret-token"
JSON = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
PROTO = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-protobuf"}
TRACE_A, TRACE_B = "a" * 32, "b" * 32


@pytest.fixture
def app(tmp_path: Path) -> Iterator[FastAPI]:
    app = create_app(tmp_path / "runs.db", ServerSettings(token=TOKEN, dataset_roots=(tmp_path,)))
    yield app
    app.state.manager.shutdown()


@pytest.fixture
def live(app: FastAPI) -> Iterator[LiveServer]:
    with LiveServer(app) as server:
        yield server


@pytest.fixture
def client(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, headers={"Authorization": JSON["Authorization"]}) as c:
        yield c


def span(trace: str, span_id: str, name: str, parent: str = "", **more: Any) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        **more,
    }


def request(*spans: dict[str, Any]) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}).encode()


def tool(trace: str, span_id: str, parent: str, name: str) -> dict[str, Any]:
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": name}},
    ]
    return span(trace, span_id, f"execute_tool {name}", parent, attributes=attributes)


def a_trace(trace: str) -> bytes:
    return request(span(trace, "1" * 16, "app"), tool(trace, "2" * 16, "1" * 16, "get_order"))


def grade(client: httpx.Client, **more: Any) -> httpx.Response:
    return client.post(
        "/api/traces/evaluations", json={"name": "t", "workflow": DEFINITION, **more}
    )


def listed(client: httpx.Client) -> set[str]:
    return {t["trace_id"] for t in client.get("/api/traces").json()["traces"]}


# ---- item 9: bounded bodies -----------------------------------------------------------------


def _bomb(size: int, wbits: int) -> bytes:
    """``size`` zero bytes compressed, made without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    piece = bytes(2**20)
    return b"".join(packer.compress(piece) for _ in range(size // 2**20)) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "wbits"), [pytest.param("gzip", 31, id="gzip"), pytest.param("deflate", 15)]
)
def test_a_compression_bomb_stops_at_the_limit_never_inflated_whole(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch, encoding: str, wbits: int
) -> None:
    monkeypatch.setattr(_traces, "MAX_REQUEST_BYTES", 2**20)
    bomb = _bomb(64 * 2**20, wbits)  # 64 KiB on the wire
    tracemalloc.start()
    try:
        answer = client.post(
            "/v1/traces", content=bomb, headers={**JSON, "Content-Encoding": encoding}
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # the whole would be 64 MiB
    assert answer.status_code == 413, answer.text
    assert "decompressing to more than 1,048,576 bytes" in answer.json()["message"]


def test_a_body_over_the_limit_is_refused_and_gzip_members_and_deflate_are_read(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_traces, "MAX_REQUEST_BYTES", 2**20)
    big = client.post("/v1/traces", content=b" " * (2**20 + 1), headers=JSON)
    assert big.status_code == 413 and "over 1,048,576" in big.json()["message"]
    half = len(a_trace(TRACE_A)) // 2
    body = a_trace(TRACE_A)
    members = gzip.compress(body[:half]) + gzip.compress(body[half:])
    sent = client.post("/v1/traces", content=members, headers={**JSON, "Content-Encoding": "gzip"})
    assert sent.status_code == 200, sent.text
    deflated = client.post(
        "/v1/traces",
        content=zlib.compress(a_trace(TRACE_B)),
        headers={**JSON, "Content-Encoding": "deflate"},
    )
    assert deflated.status_code == 200, deflated.text
    cut = client.post(
        "/v1/traces",
        content=gzip.compress(a_trace(TRACE_B))[:-9],
        headers={**JSON, "Content-Encoding": "gzip"},
    )
    assert cut.status_code == 400 and "ends before its end-of-stream" in cut.json()["message"]
    assert listed(client) == {TRACE_A, TRACE_B}


def _proto_of_empty_spans(count: int) -> bytes:
    def field(tag: int, payload: bytes) -> bytes:
        size, out = len(payload), bytearray([tag])
        while size > 0x7F:
            out.append(size & 0x7F | 0x80)
            size >>= 7
        return bytes([*out, size]) + payload

    return field(0x0A, field(0x12, b"\x12\x00" * count))


def test_a_small_body_of_many_tiny_spans_is_refused_before_it_is_decoded(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decoding takes memory per object, not per byte: 8 MiB of empty spans decode to
    hundreds of MiB, so the objects (JSON) or fields (protobuf) are counted first."""
    monkeypatch.setattr(_traces, "MAX_REQUEST_ITEMS", 1000)
    tiny = span(TRACE_A, "1" * 16, "x")
    json_answer = client.post("/v1/traces", content=request(*[tiny] * 1001), headers=JSON)
    proto_answer = client.post("/v1/traces", content=_proto_of_empty_spans(2000), headers=PROTO)
    for answer in (json_answer, proto_answer):
        assert answer.status_code == 413, answer.text
        assert "more than 1,000" in answer.json()["message"]
    assert listed(client) == set()


@pytest.mark.parametrize("traces", ["genai", "openinference"], indirect=True)
def test_real_exports_are_far_under_the_item_limit(traces: Produced) -> None:
    """The OpenTelemetry SDK's spans take under 120 counted items each, JSON or protobuf, so
    the limit lets a request carry the collector's default batch of 8,192 spans."""
    for line in traces.json_file.read_text().splitlines():
        request = json.loads(line)["resourceSpans"]
        spans = sum(len(s["spans"]) for r in request for s in r["scopeSpans"])
        assert count_items(line.encode(), "json", _traces.MAX_REQUEST_ITEMS) < 120 * spans
    data, at = traces.proto_file.read_bytes(), 0
    while at < len(data):  # the file exporter's length-prefixed requests
        size = int.from_bytes(data[at : at + 4], "big")
        body, at = data[at + 4 : at + 4 + size], at + 4 + size
        message = ExportTraceServiceRequest.FromString(body)
        spans = sum(len(s.spans) for r in message.resource_spans for s in r.scope_spans)
        assert _proto_items(body, _traces.MAX_REQUEST_ITEMS) < 120 * spans
    assert _traces.MAX_REQUEST_ITEMS >= 120 * 8_192


# ---- items 10 and 12: every field checked at intake -----------------------------------------

BAD_FIELDS = [
    pytest.param(
        {"attributes": {"key": "x"}},
        "spans[1].attributes: expected `array`, got `object`",
        id="attributes-object",
    ),
    pytest.param(
        {"events": [{"name": "e", "attributes": {"a": 1}}]},
        "spans[1].events[0].attributes: expected `array`, got `object`",
        id="event-attributes-object",
    ),
    pytest.param(
        {"attributes": [{"key": "n", "value": {"intValue": "many"}}]},
        "spans[1].attributes[0].value.intValue: expected a whole number",
        id="int-not-a-number",
    ),
    pytest.param(
        {"status": {"code": 7}}, "spans[1].status.code: expected 0, 1, 2", id="status-code"
    ),
    pytest.param(
        {"startTimeUnixNano": "soon"},
        "spans[1].startTimeUnixNano: expected nanoseconds",
        id="time",
    ),
    pytest.param(
        {"traceId": "../../../../etc/passwd%00".ljust(32, "A")},
        "spans[1].traceId: expected a 16-byte id as 32 hex digits, got '../../../../etc/passwd%00",
        id="path-as-trace-id",
    ),
    pytest.param(
        {"traceId": "../../../../etc/passwd%00"},
        "spans[1].traceId: expected a 16-byte id as 32 hex digits",
        id="short-trace-id",
    ),
    pytest.param(
        {"spanId": "zz" * 8}, "spans[1].spanId: expected an 8-byte id as 16 hex", id="span-id"
    ),
    pytest.param(
        {"parentSpanId": "1" * 15}, "spans[1].parentSpanId: expected an 8-byte id", id="parent"
    ),
]


@pytest.mark.parametrize(("change", "reason"), BAD_FIELDS)
def test_a_field_of_the_wrong_shape_is_refused_naming_its_path(
    client: httpx.Client, change: dict[str, Any], reason: str
) -> None:
    bad = {**span(TRACE_B, "3" * 16, "bad", "1" * 16), **change}
    answer = client.post(
        "/v1/traces", content=request(span(TRACE_B, "1" * 16, "app"), bad), headers=JSON
    )
    assert answer.status_code == 400, answer.text
    message = answer.json()["message"]
    assert f"resourceSpans[0].scopeSpans[0].{reason}" in message
    assert listed(client) == set()  # nothing of the request kept
    client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    graded = grade(client)
    assert graded.status_code == 200, graded.text
    assert set(graded.json()["verdicts"]) == {TRACE_A}


def test_snake_case_keys_and_protobuf_ids_of_the_wrong_size_are_refused(
    client: httpx.Client,
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    snake = json.dumps({"resource_spans": [{"scope_spans": [{"spans": [{}]}]}]})
    answer = client.post("/v1/traces", content=snake, headers=JSON)
    assert answer.status_code == 400 and "lowerCamelCase" in answer.json()["message"]
    message = ExportTraceServiceRequest()
    sent = message.resource_spans.add().scope_spans.add().spans.add()
    sent.trace_id, sent.span_id, sent.name = b"../../etc/passwd", b"\x01" * 8, "x"
    sent.trace_id = b"../../../etc/passwd\x00"
    answer = client.post("/v1/traces", content=message.SerializeToString(), headers=PROTO)
    assert answer.status_code == 400, answer.text
    assert "spans[0].traceId: expected a 16-byte id, got 20 byte(s)" in answer.json()["message"]
    assert listed(client) == set()


def test_a_bad_span_stored_earlier_is_isolated_to_its_own_trace(
    app: FastAPI, client: httpx.Client
) -> None:
    """A store kept before intake checked every field may hold a span whose attributes do not
    decode: it makes its own trace incomplete, naming it, and every other trace grades."""
    from aieval.traces import check_request

    store = app.state.trace_store
    client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    bad = request(
        span(TRACE_B, "1" * 16, "app"),
        {**span(TRACE_B, "3" * 16, "intruder", "1" * 16), "attributes": {"key": "x"}},
    )
    store.add(bad, "json", {TRACE_B: 2})
    store.add(b"{not json", "json", {TRACE_A: 1})
    with pytest.raises(Exception, match="attributes"):
        check_request(bad, "json")
    graded = grade(client)
    assert graded.status_code == 200, graded.text
    body = graded.json()
    assert set(body["verdicts"]) == {TRACE_A, TRACE_B}
    assert TRACE_A not in body["incomplete"]
    [why] = [m for m in body["incomplete"][TRACE_B] if "intruder" in m]
    assert "3333333333333333" in why and "attributes" in why
    assert body["unreadable_requests"] and "export request 3" in body["unreadable_requests"][0]
    failed = {g["name"] for g in body["verdicts"][TRACE_B]["gate_failures"]}
    assert "trace_complete" in failed


# ---- item 11: two roots, conflicting duplicates -----------------------------------------------


def test_a_second_root_never_masks_a_failed_one(client: httpx.Client) -> None:
    failed = span(TRACE_A, "1" * 16, "app", status={"code": 2, "message": "boom"})
    fake = span(TRACE_A, "9" * 16, "all fine", status={"code": 1})
    client.post("/v1/traces", content=request(failed, fake), headers=JSON)
    body = grade(client).json()
    [why] = body["incomplete"][TRACE_A]
    assert "2 root spans" in why and "1111111111111111" in why and "9999999999999999" in why
    assert body["verdicts"][TRACE_A]["passed"] is False


def test_a_span_id_sent_again_with_other_content_makes_the_trace_incomplete(
    client: httpx.Client,
) -> None:
    root = span(TRACE_A, "1" * 16, "app")
    first = tool(TRACE_A, "2" * 16, "1" * 16, "get_order")
    client.post("/v1/traces", content=request(root, first), headers=JSON)
    client.post("/v1/traces", content=request(root, first), headers=JSON)  # a retried export
    body = grade(client).json()
    assert body["incomplete"] == {}
    forged = tool(TRACE_A, "2" * 16, "1" * 16, "delete_account")
    client.post("/v1/traces", content=request(forged), headers=JSON)
    body = grade(client).json()
    [why] = body["incomplete"][TRACE_A]
    assert "sent more than once with different content" in why
    assert "'execute_tool get_order'" in why and "'execute_tool delete_account'" in why
    assert body["verdicts"][TRACE_A]["passed"] is False


# ---- items 9 and 12: grading's size, ids and concurrency ---------------------------------------


def test_trace_ids_are_checked_and_bounded(client: httpx.Client) -> None:
    client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    many = [f"{n:032x}" for n in range(40_000)]  # more than SQLite binds in one statement
    answer = grade(client, trace_ids=many)
    assert answer.status_code == 400, answer.text
    assert "40,000 ids, over the limit of 10,000" in answer.json()["message"]
    chunked = grade(client, trace_ids=[TRACE_A, *many[:2_000]])
    assert chunked.status_code == 422 and "no stored spans for 0000" in chunked.text
    graded = grade(client, trace_ids=[TRACE_A.upper()])
    assert graded.status_code == 200 and set(graded.json()["verdicts"]) == {TRACE_A}
    odd = grade(client, trace_ids=["../../../../etc/passwd%00"])
    assert odd.status_code == 400 and "trace_ids[0]: expected 32 hex" in odd.json()["message"]


def test_grading_more_spans_or_traces_than_the_limits_is_refused(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_traces, "MAX_GRADED_SPANS", 3)
    client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    client.post("/v1/traces", content=a_trace(TRACE_B), headers=JSON)
    answer = grade(client)
    assert answer.status_code == 400, answer.text
    assert "are 2 traces of 4 spans, over the limit of 10,000 traces and 3 spans" in answer.text
    assert grade(client, trace_ids=[TRACE_B]).status_code == 200
    monkeypatch.setattr(_traces, "MAX_GRADED_SPANS", 100)
    monkeypatch.setattr(_traces, "MAX_TRACE_IDS", 1)
    assert "are 2 traces of 4 spans, over the limit of 1 traces" in grade(client).text


def test_gradings_beyond_the_limit_are_answered_503_with_retry_after(
    app: FastAPI, client: httpx.Client
) -> None:
    client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    slots = app.state.trace_gradings
    taken = 0
    while slots.acquire(blocking=False):  # every slot busy, as by long gradings
        taken += 1
    try:
        busy = grade(client)
    finally:
        for _ in range(taken):
            slots.release()
    assert taken == _traces.MAX_CONCURRENT_GRADINGS
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
    assert grade(client).status_code == 200


def test_an_attribute_nested_deeper_than_the_json_parser_goes_stays_text(
    client: httpx.Client,
) -> None:
    deep = {"key": "gen_ai.output.messages", "value": {"stringValue": "[" * 100_000}}
    root = span(TRACE_A, "1" * 16, "app", attributes=[deep])
    client.post("/v1/traces", content=request(root), headers=JSON)
    client.post("/v1/traces", content=a_trace(TRACE_B), headers=JSON)
    graded = grade(client)
    assert graded.status_code == 200, graded.text
    assert set(graded.json()["verdicts"]) == {TRACE_A, TRACE_B}


def test_export_requests_beyond_the_limit_are_answered_503_with_retry_after(
    app: FastAPI, client: httpx.Client
) -> None:
    """Each request decoded may take a few hundred MiB: a few at once, the rest retried."""
    slots = app.state.trace_intakes
    taken = 0
    while slots.acquire(blocking=False):  # every slot busy, as by large uploads
        taken += 1
    try:
        busy = client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    finally:
        for _ in range(taken):
            slots.release()
    assert taken == _traces.MAX_CONCURRENT_INTAKES
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
    assert client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON).status_code == 200
    assert listed(client) == {TRACE_A}


# ---- parent cycles ---------------------------------------------------------------------------


class _CountingDict(dict[str, Any]):
    gets = 0

    def get(self, key: str, default: Any = None) -> Any:
        _CountingDict.gets += 1
        return super().get(key, default)


def test_a_parent_cycle_makes_the_trace_incomplete_and_is_walked_once(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``X`` the parent of ``Y`` the parent of ``X``, tools under ``X``: the trace is
    incomplete naming both, and each parent link is followed once (not once per tool)."""
    from aieval.traces import _mapping

    unique = _mapping._unique

    def counted(spans: Any) -> Any:
        by_id, duplicates, conflicts = unique(spans)
        return _CountingDict(by_id), duplicates, conflicts

    monkeypatch.setattr(_mapping, "_unique", counted)
    tools = [tool(TRACE_A, f"{n + 16:016x}", "1" * 16, f"t{n}") for n in range(50)]
    ring = [span(TRACE_A, "1" * 16, "X", "2" * 16), span(TRACE_A, "2" * 16, "Y", "1" * 16)]
    client.post("/v1/traces", content=request(*ring, *tools), headers=JSON)
    client.post("/v1/traces", content=a_trace(TRACE_B), headers=JSON)
    _CountingDict.gets = 0
    body = grade(client).json()
    why = body["incomplete"][TRACE_A]
    assert any(
        "2 span(s) whose parents form a cycle" in w
        and "'X' (1111111111111111)" in w
        and "'Y' (2222222222222222)" in w
        for w in why
    ), why
    assert TRACE_B not in body["incomplete"] and body["verdicts"][TRACE_A]["passed"] is False
    assert _CountingDict.gets < 20 * 54  # before: 10,000 hops for each tool span


# ---- nesting depth ---------------------------------------------------------------------------


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for n in range(depth - 1):
        if n % 2:
            value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
        else:
            value = {"arrayValue": {"values": [value]}}
    return value


def _nested_text(depth: int) -> bytes:
    """A span whose attribute ``deep`` nests ``depth`` levels (kvlist in array), as text: too
    deep for ``json.dumps`` to write."""
    value = b'{"stringValue":"x"}'
    level = b'{"kvlistValue":{"values":[{"key":"k","value":{"arrayValue":{"values":['
    close = b"]}}}]}}"
    deep = level * (depth // 2) + value + close * (depth // 2)
    root = json.dumps(span(TRACE_A, "1" * 16, "app", attributes=[])).encode()
    root = root.replace(b'"attributes": []', b'"attributes": [{"key": "deep", "value": %s}]' % deep)
    return b'{"resourceSpans": [{"scopeSpans": [{"spans": [%s]}]}]}' % root


@pytest.mark.parametrize("depth", [600, 6_000, 120_000])
def test_an_attribute_nested_too_deep_is_refused_naming_it(
    client: httpx.Client, depth: int
) -> None:
    answer = client.post("/v1/traces", content=_nested_text(depth), headers=JSON)
    assert answer.status_code == 400, answer.text
    message = answer.json()["message"]
    assert message.startswith(
        "not an OTLP export request: resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value: "
    )
    assert "nest at most 32" in message
    assert listed(client) == set()


def test_attribute_values_nest_at_most_32_levels(client: httpx.Client) -> None:
    ok = span(TRACE_A, "1" * 16, "app", attributes=[{"key": "k", "value": _nested(32)}])
    assert client.post("/v1/traces", content=request(ok), headers=JSON).status_code == 200
    deep = {"key": "k", "value": _nested(33)}
    event = {"name": "e", "attributes": [deep]}
    too_deep = span(TRACE_B, "1" * 16, "app", events=[event])
    answer = client.post("/v1/traces", content=request(too_deep), headers=JSON)
    assert answer.status_code == 400, answer.text
    assert answer.json()["message"].startswith(
        "not an OTLP export request: resourceSpans[0].scopeSpans[0].spans[0].events[0]"
        ".attributes[0].value: nested deeper than 32 levels"
    )
    assert listed(client) == {TRACE_A}
    assert grade(client).status_code == 200


# ---- slow bodies, the byte budget, decoding off the event loop -------------------------------


def _trickle(live: LiveServer, declared: int) -> socket.socket:
    """A connection that sent its headers and the start of a body of ``declared`` bytes."""
    host, port = live.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.sendall(
        f"POST /v1/traces HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n".encode()
        + b'{"resourceSpans": ['
    )
    return sock


def _reply(sock: socket.socket) -> str:
    """What the server sent until it closed the connection."""
    parts = []
    while part := sock.recv(65536):
        parts.append(part)
    return b"".join(parts).decode()


def test_slow_bodies_are_answered_408_and_never_hold_up_other_exports(
    live: LiveServer, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_traces, "BODY_GRACE_S", 1.0)
    slow = [_trickle(live, 60_000_000) for _ in range(_traces.MAX_CONCURRENT_INTAKES + 1)]
    try:
        answer = client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
        assert answer.status_code == 200, answer.text  # before: 503 while they trickled
        for sock in slow:
            reply = _reply(sock)  # the server answers once their time is up
            assert reply.startswith("HTTP/1.1 408"), reply
            assert "arrived too slowly" in reply and "1 s plus one per 16,384 bytes" in reply
    finally:
        for sock in slow:
            sock.close()
    assert listed(client) == {TRACE_A}


def test_bodies_being_received_share_a_byte_budget(app: FastAPI, client: httpx.Client) -> None:
    body = a_trace(TRACE_A)
    app.state.trace_bytes = _traces.IntakeBytes(len(body) - 1)
    busy = client.post("/v1/traces", content=body, headers=JSON)
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "5", busy.text
    assert app.state.trace_bytes.held == 0
    app.state.trace_bytes = _traces.IntakeBytes(len(body))
    assert client.post("/v1/traces", content=body, headers=JSON).status_code == 200
    assert app.state.trace_bytes.held == 0 and listed(client) == {TRACE_A}


def test_other_routes_answer_while_an_export_request_is_decoded(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aieval.traces

    check = aieval.traces.check_request
    entered, answered = threading.Event(), threading.Event()

    def slow_check(body: bytes, fmt: str) -> dict[str, int]:
        entered.set()
        answered.wait(30)  # a long decode, until the other route has answered
        return check(body, fmt)

    monkeypatch.setattr(aieval.traces, "check_request", slow_check)
    with ThreadPoolExecutor(1) as pool:
        export = pool.submit(client.post, "/v1/traces", content=a_trace(TRACE_A), headers=JSON)
        assert entered.wait(30)
        try:
            meanwhile = client.get("/api/runs", timeout=10)  # before: waited on the decode
        finally:
            answered.set()
        assert meanwhile.status_code == 200
        assert export.result().status_code == 200


# ---- token counts beyond what a store keeps ---------------------------------------------------


def _llm(trace: str, span_id: str, parent: str, tokens: int) -> dict[str, Any]:
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(tokens)}},
    ]
    return span(trace, span_id, "chat", parent, attributes=attributes)


def _agent(trace: str, span_id: str, parent: str = "") -> dict[str, Any]:
    attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]
    return span(trace, span_id, "invoke_agent", parent, attributes=attributes)


def test_token_counts_beyond_64_bits_or_summing_past_them_never_break_a_grading(
    client: httpx.Client,
) -> None:
    """Each count alone, and the sums of large valid ones, stay within what a store keeps."""
    client.post("/v1/traces", content=a_trace(TRACE_A), headers=JSON)
    traces = [TRACE_A]
    for n, tokens in enumerate((2**63 - 1, 2**63, 2**64, 2**70)):
        trace = f"{n + 1:032x}"
        traces.append(trace)
        body = request(_agent(trace, "1" * 16), _llm(trace, "2" * 16, "1" * 16, tokens))
        assert client.post("/v1/traces", content=body, headers=JSON).status_code == 200
    one_step, two_steps = "c" * 32, "d" * 32
    traces += [one_step, two_steps]
    body = request(
        _agent(one_step, "1" * 16),
        _llm(one_step, "2" * 16, "1" * 16, 2**62),
        _llm(one_step, "3" * 16, "1" * 16, 2**62),
        span(two_steps, "9" * 16, "app"),
        _agent(two_steps, "1" * 16, "9" * 16),
        _agent(two_steps, "4" * 16, "9" * 16),
        _llm(two_steps, "2" * 16, "1" * 16, 2**63 - 1),
        _llm(two_steps, "3" * 16, "4" * 16, 1),
    )
    assert client.post("/v1/traces", content=body, headers=JSON).status_code == 200
    graded = grade(client)
    assert graded.status_code == 200, graded.text
    assert set(graded.json()["verdicts"]) == set(traces)
    for trace in traces:
        alone = grade(client, trace_ids=[trace])
        assert alone.status_code == 200 and set(alone.json()["verdicts"]) == {trace}, alone.text


def test_all_zero_trace_and_span_ids_are_refused_naming_the_span(client: httpx.Client) -> None:
    """OTLP calls the all-zero trace id and span id invalid: refused, in JSON and protobuf."""
    zero_trace = request(span(TRACE_A, "1" * 16, "app"), span("0" * 32, "2" * 16, "app"))
    answer = client.post("/v1/traces", content=zero_trace, headers=JSON)
    assert answer.status_code == 400, answer.text
    assert "spans[1].traceId: the all-zero id is invalid" in answer.json()["message"]
    zero_span = request(span(TRACE_A, "0" * 16, "app"))
    answer = client.post("/v1/traces", content=zero_span, headers=JSON)
    assert answer.status_code == 400 and "spans[0].spanId" in answer.json()["message"]
    message = ExportTraceServiceRequest()
    sent = message.resource_spans.add().scope_spans.add().spans.add()
    sent.trace_id, sent.span_id, sent.name = bytes(16), b"\x01" * 8, "x"
    answer = client.post("/v1/traces", content=message.SerializeToString(), headers=PROTO)
    assert answer.status_code == 400 and "traceId: the all-zero id" in answer.json()["message"]
    assert listed(client) == set()  # nothing of a refused request is kept
