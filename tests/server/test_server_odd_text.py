"""Stored text that UTF-8 cannot hold (a lone surrogate) or that holds NUL reaches every
endpoint exactly, as valid JSON (``\\udcff`` escapes), on both backends and a real server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from tests.support.server import LiveServer, read_events

from aieval import run

# a lone surrogate (a non-UTF-8 byte under surrogateescape), a NUL, and ordinary non-ASCII
PREDICTION = "a\udcffb\x00c café"
EXPECTED = "a\udcffb"
PROMPT = "why \ud800 and \x00?"
META = {"source": "file-\udc80.txt"}
ODD_ID = "s\udcfe"  # ids are stored text too


@pytest.fixture
def server_store(store_location: str) -> str:
    """These tests run on both backends: an SQLite file, then a PostgreSQL database."""
    return store_location


@dataclass(frozen=True)
class Served:
    live: LiveServer
    baseline: str
    candidate: str


@pytest.fixture
def served(make_app: Callable[..., Any], server_store: str) -> Iterator[Served]:
    def rows(odd: bool) -> list[dict[str, Any]]:
        return [
            {
                "id": "r0",
                "prompt": PROMPT,
                "expected": EXPECTED,
                "prediction": PREDICTION if odd else EXPECTED,
                "metadata": META,
            },
            {"id": "r1", "prompt": "plain", "expected": "yes", "prediction": "yes"},
            {"id": ODD_ID, "prompt": "odd id", "expected": "yes", "prediction": "no"},
        ]

    baseline, candidate = (
        run(name="odd-text", dataset=rows(odd), scorers=["exact_match"], store=server_store).id
        for odd in (False, True)
    )
    with LiveServer(make_app()) as live:
        yield Served(live, baseline, candidate)


def body(response: httpx.Response) -> Any:
    """The answer's JSON, checked to be strict UTF-8 with the surrogates escaped."""
    assert response.status_code == 200, response.text
    text = response.content.decode("utf-8")  # strict: no raw surrogate bytes
    return json.loads(text)


def test_sample_list_and_detail_carry_the_exact_text(served: Served) -> None:
    run_id = served.candidate
    with httpx.Client(base_url=served.live.url, timeout=60) as client:
        page = client.get(f"/api/runs/{run_id}/samples", params={"limit": 3})
        assert b"\\udcff" in page.content and b"\\udcfe" in page.content
        rows = body(page)["samples"]
        assert [s["id"] for s in rows] == ["r0", "r1", ODD_ID]
        row = rows[0]
        assert (row["id"], row["prediction"], row["expected"]) == ("r0", PREDICTION, EXPECTED)
        assert row["input"] == PROMPT and row["metadata"] == META
        # the indexed table (a search) answers the same row
        found = body(client.get(f"/api/runs/{run_id}/samples", params={"q": "café"}))
        assert [s["prediction"] for s in found["samples"]] == [PREDICTION]
        for path in (f"/api/runs/{run_id}/samples/r0", f"/api/runs/{run_id}/sample?id=r0"):
            detail = body(client.get(path))
            assert detail["prediction"] == PREDICTION
            assert (detail["prompt"], detail["expected"]) == (PROMPT, EXPECTED)
            assert detail["metadata"] == META


def test_report_and_comparison_carry_the_exact_text(served: Served) -> None:
    pair = {"baseline": served.baseline, "candidate": served.candidate}
    with httpx.Client(base_url=served.live.url, timeout=60) as client:
        report = body(client.get(f"/api/runs/{served.candidate}"))
        assert report["run"]["id"] == served.candidate
        failed = {i for reason in report["failure_reasons"] for i in reason["sample_ids"]}
        assert failed == {"r0", ODD_ID}
        compared = body(client.get("/api/compare", params=pair))
        assert "r0" in json.dumps(compared)  # the regression names the sample
        side = body(client.get("/api/compare/samples/r0", params=pair))
        assert side["candidate"]["prediction"] == PREDICTION
        assert side["baseline"]["prediction"] == EXPECTED
        assert side["diff"], "the word diff of the two predictions"


async def test_event_stream_carries_the_exact_text(served: Served) -> None:
    async with (
        served.live.client() as client,
        client.stream("GET", f"/api/runs/{served.candidate}/events") as stream,
    ):
        assert stream.status_code == 200
        predictions = {}
        async for event in read_events(stream.aiter_lines()):
            if event.event == "sample_completed":
                data = event.data
                predictions[data["id"]] = data["prediction"]
            if event.event in ("run_completed", "error"):
                break
    assert predictions == {"r0": PREDICTION, "r1": "yes", ODD_ID: "no"}
