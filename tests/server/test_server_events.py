"""Event streams against a real uvicorn: live runs, workflow gates, reconnects, keep-alives."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.server import SSE, LiveServer, read_events, rows_body

from aieval.store import Store


async def start(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    response = await client.post("/api/evaluations", json=body)
    assert response.status_code == 202, response.text
    run_id: str = response.json()["run_id"]
    assert response.json()["events_url"] == f"/api/runs/{run_id}/events"
    return run_id


async def follow(
    client: httpx.AsyncClient,
    run_id: str,
    *,
    last_id: int | None = None,
    stop_after: int | None = None,
    comments: list[str] | None = None,
) -> list[SSE]:
    """Events of a run until the stream closes (or until event id ``stop_after``)."""
    headers = {"Last-Event-ID": str(last_id)} if last_id is not None else {}
    events: list[SSE] = []
    async with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for event in read_events(response.aiter_lines()):
            if event.comment is not None:
                if comments is not None:
                    comments.append(event.comment)
                continue
            events.append(event)
            if stop_after is not None and event.id == stop_after:
                break
    return events


def slow_body(server: OpenAIServer, n: int, delay: float, **extra: Any) -> dict[str, Any]:
    """``n`` rows answered one at a time by the loopback model server after ``delay`` s."""
    server.responder = lambda body: Reply("yes", delay=delay)
    rows = [{"id": f"s{i}", "prompt": f"question {i}", "expected": "yes"} for i in range(n)]
    return {
        "name": extra.pop("name", "slow"),
        "dataset": {"rows": rows},
        "target": {"provider": "openai-compatible", "model": "m", "base_url": server.base_url},
        "scorers": ["exact_match"],
        "settings": {"concurrency": 1, "cache": False, "retries": 0},
        **extra,
    }


def check_sequence(events: list[SSE], n: int) -> None:
    """Ids 0..2n+1 once each; run_started, then sample/progress pairs, then run_completed."""
    assert [e.id for e in events] == list(range(2 * n + 2))
    kinds = [e.event for e in events]
    assert kinds == ["run_started"] + ["sample_completed", "progress"] * n + ["run_completed"]


async def test_inline_rows_stream_every_sample_then_the_bundle(live: LiveServer) -> None:
    body = rows_body(6)
    rows = body["dataset"]["rows"]
    async with live.client() as client:
        run_id = await start(client, body)
        events = await follow(client, run_id)
    check_sequence(events, len(rows))
    right = {r["id"] for r in rows if r["prediction"] == r["expected"]}
    samples = [e.data for e in events if e.event == "sample_completed"]
    assert {s["id"] for s in samples} == {r["id"] for r in rows}
    for s in samples:
        assert s["passed"] is (s["id"] in right)
        assert s["scores"] == {"exact_match": 1.0 if s["id"] in right else 0.0}
        assert s["hard_gates"] == {} and s["grade"] is None and s["error"] is None
    last_progress = [e.data for e in events if e.event == "progress"][-1]
    n, ok = len(rows), len(right)
    assert last_progress == {"done": n, "total": n, "passed": ok, "failed": n - ok}
    bundle = events[-1].data
    assert bundle["kind"] == "report" and bundle["run"]["id"] == run_id
    assert bundle["pass_rate"]["passed"] == len(right)
    assert events[0].data["id"] == run_id and events[0].data["n_examples"] == len(rows)


async def test_workflow_eval_streams_hard_gate_verdicts_with_reasons(live: LiveServer) -> None:
    body = {
        "name": "code-review",
        "dataset": "workflows/code_review_runs",
        "workflow": "workflows/code_review.yaml",
    }
    async with live.client() as client:
        run_id = await start(client, body)
        events = await follow(client, run_id)
        samples = [e.data for e in events if e.event == "sample_completed"]
        check_sequence(events, len(samples))
        assert samples
        for s in samples:
            detail = (await client.get(f"/api/runs/{run_id}/samples/{s['id']}")).json()
            verdict = detail["verdict"]
            assert s["grade"] == verdict["grade"] in {"A", "B", "C", "D", "F"}
            assert s["passed"] == verdict["passed"]
            assert s["weighted_score"] == verdict["weighted_score"]
            assert [g["name"] for g in verdict["gates"]] == list(s["hard_gates"])
            evaluation = verdict["workflow"]
            assert {g: v["passed"] for g, v in s["hard_gates"].items()} == evaluation["hard_gates"]
            assert all(isinstance(v["reason"], str) for v in s["hard_gates"].values())
            if not all(evaluation["hard_gates"].values()):
                assert s["grade"] == "F" and s["passed"] is False
            steps = detail["workflow_run"]["steps"]
            assert [st["name"] for st in steps] and all(
                set(st) == {"name", "agent", "status", "duration_s", "start_s", "retries",
                            "model", "tool_calls", "error"}
                for st in steps
            )  # fmt: skip
    failed = [s for s in samples if not all(v["passed"] for v in s["hard_gates"].values())]
    assert failed, "the examples include runs that fail a hard gate"
    assert events[-1].data["grades"] is not None


async def test_reconnect_with_last_event_id_gets_every_later_event_once(
    live: LiveServer, openai_server: OpenAIServer
) -> None:
    n = 6
    async with live.client() as client:
        run_id = await start(client, slow_body(openai_server, n, delay=0.05))
        first = await follow(client, run_id, stop_after=5)
        rest = await follow(client, run_id, last_id=first[-1].id)
        replay = await follow(client, run_id)
    assert [e.id for e in first] == list(range(6))
    combined = first + rest
    check_sequence(combined, n)
    # the resumed part is identical to the same events replayed after the run ended
    tail = [e for e in replay if e.id is not None and e.id > 5]
    assert [(e.id, e.event, e.data) for e in rest[:-1]] == [
        (e.id, e.event, e.data) for e in tail[:-1]
    ]


@pytest.mark.parametrize("last_id", list(range(-1, 12)))
async def test_finished_run_replays_exactly_the_events_after_any_id(
    live: LiveServer, last_id: int
) -> None:
    n = 5  # ids 0..11
    async with live.client() as client:
        run_id = await start(client, rows_body(n))
        full = await follow(client, run_id)
        resumed = await follow(client, run_id, last_id=last_id)
    check_sequence(full, n)
    assert [(e.id, e.event, e.data) for e in resumed] == [
        (e.id, e.event, e.data) for e in full if e.id is not None and e.id > last_id
    ]


async def test_slow_run_sends_keepalive_comments(
    live: LiveServer, openai_server: OpenAIServer
) -> None:
    comments: list[str] = []
    async with live.client() as client:
        run_id = await start(client, slow_body(openai_server, 2, delay=0.5))
        events = await follow(client, run_id, comments=comments)
    check_sequence(events, 2)
    assert comments, "a keep-alive comment every 0.2 s while samples take 0.5 s"


async def test_a_client_that_disconnects_does_not_stop_the_run(
    live: LiveServer, openai_server: OpenAIServer, make_app: Any
) -> None:
    n = 5
    async with live.client() as client:
        run_id = await start(client, slow_body(openai_server, n, delay=0.05))
        first = await follow(client, run_id, stop_after=0)
        assert first[0].event == "run_started"
    store = Store(live.server.config.app.state.store.path)
    deadline = asyncio.get_running_loop().time() + 20
    while store.get_run(run_id).status == "running":
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    assert store.get_run(run_id).status == "completed"
    assert store.count_samples(run_id) == n


async def test_a_run_that_cannot_start_ends_its_stream_with_an_error_event(
    live: LiveServer, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    body = slow_body(openai_server, 2, delay=0.0)
    body["target"] = {"provider": "openai", "model": "m"}  # no key: fails when it starts
    async with live.client() as client:
        run_id = await start(client, body)
        events = await follow(client, run_id)
        listed = (await client.get("/api/runs")).json()["runs"]
    assert [(e.id, e.event) for e in events] == [(0, "error")]
    assert "OPENAI_API_KEY" in events[0].data["message"]
    assert run_id not in {r["id"] for r in listed}


async def test_bundle_and_samples_are_readable_while_the_run_goes_on(
    live: LiveServer, openai_server: OpenAIServer
) -> None:
    n = 8
    async with live.client() as client:
        run_id = await start(client, slow_body(openai_server, n, delay=0.1))
        await follow(client, run_id, stop_after=4)  # two samples stored
        bundle = (await client.get(f"/api/runs/{run_id}")).json()
        samples = (await client.get(f"/api/runs/{run_id}/samples")).json()
        listed = (await client.get("/api/runs")).json()["runs"][0]
    assert bundle["run"]["status"] == "running"
    assert 2 <= bundle["samples"] < n
    assert 2 <= samples["total"] < n
    assert listed["status"] == "running" and listed["finished_at"] is None
