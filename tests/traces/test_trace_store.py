"""Where a server keeps the export requests it receives: in the run store itself, on both
backends (a PostgreSQL team server keeps them in PostgreSQL, no file of its own), each body
byte for byte as it arrived; the trace file of an earlier aieval is copied in once."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from tests.support.server import LiveServer
from tests.traces._definition import DEFINITION

from aieval.errors import StoreError
from aieval.server import ServerSettings, create_app
from aieval.store import ReceivedTraces, Store, parse_location

TOKEN = "trace-store-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {**AUTH, "Content-Type": "application/json"}
PROTO = {**AUTH, "Content-Type": "application/x-protobuf"}
TRACE_A, TRACE_B = "a" * 32, "ff" * 16
# what an earlier aieval created in its own trace file
EARLIER_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY, received REAL NOT NULL, format TEXT NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS request_traces (
    request_id INTEGER NOT NULL REFERENCES requests(id), trace_id TEXT NOT NULL,
    spans INTEGER NOT NULL, PRIMARY KEY (trace_id, request_id));
"""


def _json_trace(trace: str) -> bytes:
    spans = [
        {"traceId": trace, "spanId": "1" * 16, "name": "app", "startTimeUnixNano": "1000",
         "endTimeUnixNano": "2000"},
        {"traceId": trace, "spanId": "2" * 16, "parentSpanId": "1" * 16,
         "name": "execute_tool get_order", "startTimeUnixNano": "1100",
         "endTimeUnixNano": "1900", "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
             {"key": "gen_ai.tool.name", "value": {"stringValue": "get_order"}}]},
    ]  # fmt: skip
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def _proto_trace(trace: str) -> bytes:
    """A protobuf request whose ids are bytes no text encoding holds (0xff)."""
    message = ExportTraceServiceRequest()
    sent = message.resource_spans.add().scope_spans.add().spans.add()
    sent.trace_id, sent.span_id, sent.name = bytes.fromhex(trace), b"\xff" * 8, "app"
    sent.start_time_unix_nano, sent.end_time_unix_nano = 1000, 2000
    return message.SerializeToString()


@pytest.fixture
def served(
    store_location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Any]]:
    """The store, and a function serving it (a server started anew on each call)."""
    monkeypatch.chdir(tmp_path)  # where an earlier aieval made ./aieval-traces.db
    monkeypatch.delenv("AIEVAL_TRACES_DB", raising=False)
    apps = []

    def serve() -> LiveServer:
        app = create_app(store_location, ServerSettings(token=TOKEN, dataset_roots=(tmp_path,)))
        apps.append(app)
        return LiveServer(app)

    yield store_location, serve
    for app in apps:
        app.state.manager.shutdown()


def _traces(client: httpx.Client) -> dict[str, dict[str, Any]]:
    answer = client.get("/api/traces")
    assert answer.status_code == 200, answer.text
    return {t["trace_id"]: t for t in answer.json()["traces"]}


def test_received_requests_are_kept_in_the_run_store_as_they_arrived(
    served: tuple[str, Any], tmp_path: Path
) -> None:
    location, serve = served
    sent = [(_json_trace(TRACE_A), JSON), (_proto_trace(TRACE_B), PROTO)]
    with serve() as live, httpx.Client(base_url=live.url, headers=AUTH) as client:
        for body, headers in sent:
            answer = client.post("/v1/traces", content=body, headers=headers)
            assert answer.status_code == 200, answer.text
        listed = _traces(client)
        graded = client.post(
            "/api/traces/evaluations", json={"name": "kept", "workflow": DEFINITION}
        )
    assert {t: (v["spans"], v["requests"]) for t, v in listed.items()} == {
        TRACE_A: (2, 1),
        TRACE_B: (1, 1),
    }
    assert graded.status_code == 200, graded.text
    assert set(graded.json()["verdicts"]) == {TRACE_A, TRACE_B}
    assert graded.json()["unreadable_requests"] == []
    received = ReceivedTraces(parse_location(location))
    kept = [received.request(i) for i in received.request_ids()]
    assert [(r.format, r.body) for r in kept if r is not None] == [
        ("json", sent[0][0]),
        ("protobuf", sent[1][0]),
    ]
    assert received.request_ids([TRACE_B]) == [received.request_ids()[1]]
    # nothing kept beside the store, nor in the server's working folder
    assert sorted(p.name for p in tmp_path.rglob("*traces*")) == []


def _earlier_file(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if location.startswith("postgresql"):
        path = tmp_path / "old" / "traces.db"
        monkeypatch.setenv("AIEVAL_TRACES_DB", str(path))
    else:
        path = Path(location + ".traces.db")
    path.parent.mkdir(exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(EARLIER_SCHEMA)
    db.close()
    return path


def _keep_earlier(path: Path, received: float, fmt: str, body: bytes, trace: str, n: int) -> None:
    with sqlite3.connect(path) as db:
        row = db.execute(
            "INSERT INTO requests (received, format, body) VALUES (?, ?, ?)",
            (received, fmt, body),
        )
        db.execute("INSERT INTO request_traces VALUES (?, ?, ?)", (row.lastrowid, trace, n))
    db.close()


def test_an_earlier_trace_file_is_copied_into_the_store_once(
    served: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location, serve = served
    earlier = _earlier_file(location, tmp_path, monkeypatch)
    _keep_earlier(earlier, 1000.0, "json", _json_trace(TRACE_A), TRACE_A, 2)
    _keep_earlier(earlier, 2000.0, "protobuf", _proto_trace(TRACE_B), TRACE_B, 1)
    for _ in range(2):  # a restart copies nothing twice
        with serve() as live, httpx.Client(base_url=live.url, headers=AUTH) as client:
            listed = _traces(client)
        assert {t: (v["requests"], v["first_received"]) for t, v in listed.items()} == {
            TRACE_A: (1, 1000.0),
            TRACE_B: (1, 2000.0),
        }
    # an earlier server still writing the file: only what it added since is copied
    _keep_earlier(earlier, 3000.0, "json", _json_trace(TRACE_A), TRACE_A, 2)
    with serve() as live, httpx.Client(base_url=live.url, headers=AUTH) as client:
        listed = _traces(client)
        graded = client.post(
            "/api/traces/evaluations", json={"name": "old", "workflow": DEFINITION}
        )
    assert listed[TRACE_A]["requests"] == 2 and listed[TRACE_A]["last_received"] == 3000.0
    assert graded.status_code == 200 and set(graded.json()["verdicts"]) == {TRACE_A, TRACE_B}
    received = ReceivedTraces(parse_location(location))
    bodies = [r.body for r in map(received.request, received.request_ids()) if r is not None]
    assert bodies == [_json_trace(TRACE_A), _proto_trace(TRACE_B), _json_trace(TRACE_A)]
    with sqlite3.connect(earlier) as db:  # the file itself is left as it was
        assert db.execute("SELECT COUNT(*) FROM requests").fetchone() == (3,)
    db.close()


def test_a_file_in_the_trace_file_place_that_is_not_one_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    Path(f"{store}.traces.db").write_bytes(b"not a database at all")
    with pytest.raises(StoreError, match=r"runs\.db\.traces\.db"):
        create_app(store, ServerSettings(token=TOKEN, dataset_roots=(tmp_path,)))


def test_deleting_old_requests_takes_their_trace_index_with_them(store_location: str) -> None:
    """The retention statement of docs/team.md: a request's traces go with it."""
    Store(store_location).close()
    received = ReceivedTraces(parse_location(store_location))
    received.add(b"old", "json", {TRACE_A: 1}, received=1000.0)
    received.add(b"new", "json", {TRACE_B: 2}, received=5000.0)
    with Store(store_location) as store:
        store._write("DELETE FROM received_requests WHERE received < ?", (2000.0,))
    assert [t.trace_id for t in received.traces()] == [TRACE_B]
    assert received.size() == (1, 2) and received.size([TRACE_A]) == (0, 0)
