"""``aieval serve`` takes OTLP/HTTP on ``POST /v1/traces`` (protobuf and JSON, behind the token),
keeps the spans, and grades what arrived."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.support.server import LiveServer
from tests.traces._definition import DEFINITION
from tests.traces._produce import Produced, run_app

from aieval.server import ServerSettings, create_app
from aieval.store import Store

TOKEN = "s3cret-token"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    app = create_app(tmp_path / "runs.db", ServerSettings(token=TOKEN, dataset_roots=(tmp_path,)))
    with LiveServer(app) as server:
        yield server
    app.state.manager.shutdown()


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def test_the_otlp_exporter_sends_to_the_server_and_its_traces_are_graded(
    live: LiveServer, tmp_path: Path
) -> None:
    ids = run_app(f"{live.url}/v1/traces", "genai", ["ok", "forbidden"], token=TOKEN)
    with httpx.Client(base_url=live.url, headers=auth(), timeout=30) as client:
        listed = client.get("/api/traces").json()["traces"]
        assert {t["trace_id"] for t in listed} == set(ids.values())
        assert all(t["spans"] >= 8 for t in listed)
        graded = client.post(
            "/api/traces/evaluations", json={"name": "from-otlp", "workflow": DEFINITION}
        )
    assert graded.status_code == 200, graded.text
    body = graded.json()
    assert body["traces"] == 2 and body["incomplete"] == {}
    verdicts = body["verdicts"]
    assert verdicts[ids["forbidden"]]["grade"] == "F"
    failed = {g["name"] for g in verdicts[ids["forbidden"]]["gate_failures"]}
    assert "no_forbidden_tool_invoked" in failed
    # the score says which share of the weights it covers (task_correctness: no scorer)
    ok = verdicts[ids["ok"]]
    assert ok["weighted_score"] == 100.0 and ok["score_coverage"]["unscored"] == [
        "task_correctness"
    ]
    assert ok["score_coverage"]["text"].startswith("100.00 over 80% of the weights")
    stored = Store(tmp_path / "runs.db").get_run(body["run_id"])
    assert stored is not None and stored.name == "from-otlp"


def test_json_and_gzip_bodies_and_the_token(live: LiveServer, genai: Produced) -> None:
    first = genai.json_file.read_text().splitlines()[0]
    with httpx.Client(base_url=live.url, timeout=30) as client:
        refused = client.post(
            "/v1/traces", content=first, headers={"Content-Type": "application/json"}
        )
        assert refused.status_code == 401
        sent = client.post(
            "/v1/traces",
            content=gzip.compress(first.encode()),
            headers={**auth(), "Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        assert sent.status_code == 200, sent.text
        bad = client.post(
            "/v1/traces",
            content=b"\x0a\xff\xff",
            headers={**auth(), "Content-Type": "application/x-protobuf"},
        )
        assert bad.status_code == 400 and "not an OTLP export request" in bad.json()["message"]
        listed = client.get("/api/traces", headers=auth()).json()["traces"]
    trace_ids = {
        s["traceId"]
        for r in json.loads(first)["resourceSpans"]
        for sc in r["scopeSpans"]
        for s in sc["spans"]
    }
    assert {t["trace_id"] for t in listed} == trace_ids


def test_grading_a_trace_still_arriving_fails_trace_complete(
    live: LiveServer, genai: Produced
) -> None:
    first = genai.json_file.read_text().splitlines()[0]  # one batch: its traces are partial
    with httpx.Client(base_url=live.url, headers=auth(), timeout=30) as client:
        client.post("/v1/traces", content=first, headers={"Content-Type": "application/json"})
        graded = client.post(
            "/api/traces/evaluations", json={"name": "early", "workflow": DEFINITION}
        ).json()
        unknown = client.post(
            "/api/traces/evaluations",
            json={"name": "x", "workflow": DEFINITION, "trace_ids": ["0" * 32]},
        )
    assert graded["incomplete"], graded
    for trace_id in graded["incomplete"]:
        failed = {g["name"] for g in graded["verdicts"][trace_id]["gate_failures"]}
        assert "trace_complete" in failed
    assert unknown.status_code == 422 and "trace_ids" in unknown.json()["message"]
