"""The JSON the viewer reads shows an invalid conversation as invalid, never failed, on both
store backends: the sample table's rows and its `invalid` filter (the in-process index on
SQLite, the store's SQL on PostgreSQL), the runs list's pass rate, and the live progress
counters of the event stream, from the start and after a reconnect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.support.reports import store_run
from tests.support.server import LiveServer

import aieval.server as server_api
from aieval._records import SampleRecord, ScoreRecord
from aieval.core import INVALID, Reason, Verdict
from aieval.store import Store


def _samples() -> list[SampleRecord]:
    """Passed, invalid, failed, invalid, in that order."""
    invalid = Verdict(False, (Reason(INVALID, "simulated user", "persona_break at turn 3"),))
    return [
        SampleRecord(id="ok", index=0, input="a", prediction="a", passed=True,
                     scores={"polite": ScoreRecord(1.0)}, verdict=Verdict(True, ())),
        SampleRecord(id="bad-user-1", index=1, input="b", prediction="b", passed=None,
                     scores={"polite": ScoreRecord(None)}, verdict=invalid),
        SampleRecord(id="wrong", index=2, input="c", prediction="c", passed=False,
                     scores={"polite": ScoreRecord(0.0)}, verdict=Verdict(False, ())),
        SampleRecord(id="bad-user-2", index=3, input="d", prediction="d", passed=None,
                     scores={"polite": ScoreRecord(None)}, verdict=invalid),
    ]  # fmt: skip


@pytest.fixture
def served(store_location: str) -> Iterator[tuple[str, str]]:
    with Store(store_location) as store:
        run_id = store_run(store, _samples())
    app = server_api.create_app(store_location)
    try:
        with LiveServer(app) as live:
            yield live.url, run_id
    finally:
        app.state.manager.shutdown()


def _events(url: str, last_id: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """A finished run's event stream, read to its end: ``(event, data)`` in order."""
    headers = {"Last-Event-ID": str(last_id)} if last_id is not None else {}
    found: list[tuple[str, dict[str, Any]]] = []
    kind = ""
    with httpx.stream("GET", url, headers=headers, timeout=30) as response:
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                found.append((kind, json.loads(line.split(":", 1)[1])))
    return found


def test_the_viewers_json_shows_invalid_samples_as_invalid(served: tuple[str, str]) -> None:
    url, run_id = served
    table = f"{url}/api/runs/{run_id}/samples"
    rows = {s["id"]: s for s in httpx.get(table).json()["samples"]}
    assert {k: (s["passed"], s["invalid"]) for k, s in rows.items()} == {
        "ok": (True, False),
        "bad-user-1": (None, True),
        "wrong": (False, False),
        "bad-user-2": (None, True),
    }

    def ids(outcome: str) -> list[str]:
        body = httpx.get(table, params={"filter": outcome}).json()
        assert body["count"]["value"] == len(body["samples"])
        return [s["id"] for s in body["samples"]]

    assert ids("invalid") == ["bad-user-1", "bad-user-2"]
    assert ids("failed") == ["wrong"]  # an invalid sample did not fail
    assert ids("passed") == ["ok"]
    (item,) = [r for r in httpx.get(f"{url}/api/runs").json()["runs"] if r["id"] == run_id]
    assert (item["samples"], item["invalid"], item["pass_rate"]) == (4, 2, 0.5)

    events = _events(f"{url}/api/runs/{run_id}/events")
    progress = [data for kind, data in events if kind == "progress"]
    assert [(p["passed"], p["failed"], p.get("invalid", 0)) for p in progress] == [
        (1, 0, 0),
        (1, 0, 1),
        (1, 1, 1),
        (1, 1, 2),
    ]
    completed = [data for kind, data in events if kind == "sample_completed"]
    assert [s["invalid"] for s in completed] == [False, True, False, True]
    # a reconnect after the third sample's event counts from the store
    again = _events(f"{url}/api/runs/{run_id}/events", last_id=5)
    resumed = [data for kind, data in again if kind == "progress"]
    assert [(p["done"], p["passed"], p["failed"], p["invalid"]) for p in resumed] == [
        (3, 1, 1, 1),
        (4, 1, 1, 2),
    ]
