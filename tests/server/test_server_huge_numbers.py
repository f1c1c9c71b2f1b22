"""A store holding numbers an upload now refuses (written by an older version, or by a local
run): 1e308 costs, latencies and scores, infinity, NaN inside JSON text. Every page of the API
still answers, through a real server on 127.0.0.1; what JSON cannot hold is answered as null."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest
from tests.push.helpers import make_run
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer


@pytest.fixture
def runs(server_store: str) -> tuple[str, str]:
    first, second = make_run(server_store, "huge", 4), make_run(server_store, "huge", 4)
    with sqlite3.connect(server_store) as db:
        db.execute("UPDATE samples SET cost = 1e308, latency_s = 1e308")
        db.execute("UPDATE samples SET input = '{\"q\": NaN}' WHERE sample_id = 'q1'")
        db.execute("UPDATE scores SET value = 1e308 WHERE sample_id IN ('q0', 'q1')")
        db.execute("UPDATE scores SET value = 9e999 WHERE sample_id = 'q2'")
    db.close()
    return first, second


@pytest.fixture
def live(make_app: AppFactory, runs: tuple[str, str]) -> Iterator[LiveServer]:
    with LiveServer(make_app()) as server:
        yield server


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy on the sums
def test_every_page_answers_over_huge_and_non_finite_numbers(
    live: LiveServer, runs: tuple[str, str]
) -> None:
    a, b = runs
    pages = [
        "/api/runs",
        f"/api/runs/{a}",
        f"/api/runs/{a}/header",
        f"/api/runs/{a}/samples",
        f"/api/runs/{a}/sample?id=q1",
        f"/api/runs/{a}/sample?id=q0",
        f"/api/compare?baseline={a}&candidate={b}",
        f"/api/compare/sample?id=q1&baseline={a}&candidate={b}",
    ]
    for page in pages:
        answer = httpx.get(live.url + page, timeout=60)
        assert answer.status_code == 200, (page, answer.text[:300])
        answer.json()  # valid JSON: no NaN or Infinity in it
