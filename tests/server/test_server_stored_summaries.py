"""A run's stored summary is data (an upload sets it): the runs list and a run's header read it
as a typed summary, whatever its age or shape, and never answer 500 for it."""

from __future__ import annotations

from pathlib import Path

import httpx

from aieval.store import Store

ODD = {
    "samples": 3, "target_errors": 1.0, "pass_rate": "high",
    "scorers": {"exact": {"mean": 0.5, "errors": 2, "missing": 1}, "junk": [1, 2]},
    "evaluation": {"grades": {"A": 1, "F": "two"}},
}  # fmt: skip


async def test_an_odd_stored_summary_is_listed_from_what_it_holds(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    with Store(tmp_path / "runs.db") as store:
        odd = store.create_run(name="odd")
        store.finish_run(odd, status="completed", metrics=ODD)
        running = store.create_run(name="running")
    listing = await client.get("/api/runs")
    assert listing.status_code == 200, listing.text
    items = {item["id"]: item for item in listing.json()["runs"]}
    assert items[odd]["errors"] == {"target": 1, "scorers": 1}  # the missing score counted once
    assert items[odd]["metrics"] == {"exact": 0.5}  # an unreadable scorer entry left out
    assert items[odd]["grades"] == {"A": 1}  # a count that is no number is left out
    header = (await client.get(f"/api/runs/{odd}/header")).json()
    assert header["target_errors"] == 1
    # a run still running has no summary: its target errors are unknown, not 0
    assert (await client.get(f"/api/runs/{running}/header")).json()["target_errors"] is None
