"""Several evaluations at once run on worker threads; the server loop keeps answering."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.support.openai_server import OpenAIServer, Reply
from tests.support.server import LiveServer, read_events


def slow(server: OpenAIServer, name: str, n: int) -> dict[str, Any]:
    rows = [{"id": f"{name}{i}", "prompt": f"q{i}", "expected": "yes"} for i in range(n)]
    return {
        "name": name,
        "dataset": {"rows": rows},
        "target": {"provider": "openai-compatible", "model": "m", "base_url": server.base_url},
        "scorers": ["exact_match"],
        "settings": {"concurrency": 1, "cache": False, "retries": 0},
    }


async def test_three_runs_at_once_while_the_api_stays_responsive(
    make_app: Any, openai_server: OpenAIServer
) -> None:
    # long model calls, so a busy shared machine cannot make the timings below flaky
    delay, n = 0.3, 4
    openai_server.responder = lambda body: Reply("yes", delay=delay)
    with LiveServer(make_app(max_concurrent_runs=3)) as live:
        async with live.client() as client:
            ids = []
            for name in ("a", "b", "c"):
                response = await client.post("/api/evaluations", json=slow(openai_server, name, n))
                assert response.status_code == 202
                ids.append(response.json()["run_id"])

            async def finish(run_id: str) -> list[str]:
                async with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
                    return [e.event async for e in read_events(stream.aiter_lines()) if e.event]

            followers = [asyncio.create_task(finish(run_id)) for run_id in ids]
            slowest = 0.0
            while not all(f.done() for f in followers):
                before = time.perf_counter()
                listing = await client.get("/api/runs")
                slowest = max(slowest, time.perf_counter() - before)
                assert listing.status_code == 200
                await asyncio.sleep(0.02)
            results = [f.result() for f in followers]
            listed = {r["id"]: r for r in (await client.get("/api/runs")).json()["runs"]}
    assert all(kinds[-1] == "run_completed" for kinds in results)
    assert all(listed[run_id]["samples"] == n for run_id in ids)
    # serial would take 3 x n x delay; concurrent runs overlap
    span = max(listed[i]["finished_at"] for i in ids) - min(listed[i]["created_at"] for i in ids)
    assert span < 3 * n * delay
    assert slowest < delay * n / 2, f"GET /api/runs took {slowest:.3f} s during the runs"
    # the three runs overlapped in time on the model server
    assert max(r.in_flight for r in openai_server.requests) >= 2


async def test_runs_beyond_the_limit_wait_their_turn(
    make_app: Any, openai_server: OpenAIServer
) -> None:
    openai_server.responder = lambda body: Reply("yes", delay=0.05)
    with LiveServer(make_app(max_concurrent_runs=1)) as live:
        async with live.client() as client:
            ids = []
            for name in ("a", "b"):
                response = await client.post("/api/evaluations", json=slow(openai_server, name, 3))
                ids.append(response.json()["run_id"])
            # the queued run's stream waits for it to start, then follows it to the end
            async with client.stream("GET", f"/api/runs/{ids[1]}/events") as stream:
                kinds = [e.event async for e in read_events(stream.aiter_lines()) if e.event]
            runs = {r["id"]: r for r in (await client.get("/api/runs")).json()["runs"]}
    assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
    assert runs[ids[0]]["finished_at"] <= runs[ids[1]]["created_at"]
    assert max(r.in_flight for r in openai_server.requests) == 1
