"""Several evaluations at once run on worker threads; the server loop keeps answering."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
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


# Synchronous, so while it waits it blocks whatever thread runs its run: it says so with a
# marker file, then waits (at most ten minutes) for the gate file.
BLOCKING_SCORER = """
import time
from pathlib import Path
from aieval.scorers import scorer

HERE = Path(__file__).parent

@scorer(name="blocks_its_thread")
def blocks_its_thread(prediction, expected, *, example=None):
    (HERE / f"scoring-{example.id}").touch()
    deadline = time.monotonic() + 600
    while not (HERE / "gate").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return 1.0
"""


async def test_three_runs_at_once_while_the_api_stays_responsive(make_app: Any, root: Path) -> None:
    (root / "blocking.py").write_text(BLOCKING_SCORER)
    n = 3

    def held(name: str) -> dict[str, Any]:
        rows = [{"id": f"{name}{i}", "prompt": "q", "expected": "y", "prediction": "y"}
                for i in range(n)]  # fmt: skip
        return {"name": name, "dataset": {"rows": rows}, "imports": ["blocking.py"],
                "scorers": ["blocks_its_thread"], "settings": {"concurrency": 1}}  # fmt: skip

    with LiveServer(make_app(max_concurrent_runs=3, allow_imports=True)) as live:
        async with live.client() as client:
            try:
                ids = []
                for name in ("a", "b", "c"):
                    response = await client.post("/api/evaluations", json=held(name))
                    assert response.status_code == 202, response.text
                    ids.append(response.json()["run_id"])
                # each run's first sample blocks its thread: three at once need three threads
                markers = [root / f"scoring-{name}0" for name in ("a", "b", "c")]
                deadline = time.monotonic() + 180
                while not all(m.exists() for m in markers):
                    assert time.monotonic() < deadline, "the three runs never ran at once"
                    await asyncio.sleep(0.02)
                # ...while the server's loop answers
                listing = await client.get("/api/runs")
                assert listing.status_code == 200
                states = {r["id"]: r["status"] for r in listing.json()["runs"]}
                assert [states[i] for i in ids] == ["running"] * 3
            finally:
                (root / "gate").touch()

            async def finish(run_id: str) -> list[str]:
                async with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
                    return [e.event async for e in read_events(stream.aiter_lines()) if e.event]

            results = await asyncio.gather(*(finish(run_id) for run_id in ids))
            listed = {r["id"]: r for r in (await client.get("/api/runs")).json()["runs"]}
    assert all(kinds[-1] == "run_completed" for kinds in results)
    assert all(listed[run_id]["samples"] == n for run_id in ids)


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
