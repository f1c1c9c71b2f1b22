"""The sample table's count: a page asked with ``count=fast`` (as the viewer asks) never counts
a whole run for a filter no index counts; it says its count is a lower bound (``"kind":
"at_least"``, ``total`` None), and the exact count is a request of its own, then kept. Exact
counts stay exact, on SQLite always."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.server.test_server_table_index import brute
from tests.server.test_server_table_sql import graded_run

import aieval.store._table_queries as table_queries
from aieval.server import ServerSettings, create_app
from aieval.store._postgres import PostgresBackend

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

#: filters no index counts: each a lower bound on a fast first look
UNINDEXED: list[dict[str, Any]] = [
    {"filter": "error"},
    {"filter": "no_error", "sort": "score:token_f1", "order": "desc"},
    {"filter": "gate_failed"},
    {"meta": "topic=billing"},
    {"q": "a"},
    {"scorer": "token_f1", "min": 0.2},
]
#: filters an index counts: exact at once
INDEXED: list[dict[str, Any]] = [{}, {"filter": "failed"}, {"filter": "passed", "sort": "id"}]
PREFIX = 40


@pytest.fixture
def api(make_app: Callable[..., Any]) -> Iterator[TestClient]:
    with TestClient(make_app(), base_url="http://127.0.0.1:8765") as client:
        yield client


@pytest.fixture
def server_store(pg_url: str) -> str:
    """The apps serve a PostgreSQL store (the SQLite test makes its own)."""
    return pg_url


def _get(api: TestClient, run_id: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = api.get(f"/api/runs/{run_id}/samples", params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_a_fast_first_look_bounds_the_count_and_the_exact_one_follows(
    api: TestClient, server_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_queries, "COUNT_PREFIX", PREFIX)
    run_id = graded_run(server_store, 240)
    for params in UNINDEXED:
        want = brute(server_store, run_id, params)
        assert len(want) > 10, params  # a filter that keeps enough to be worth bounding
        fast = _get(api, run_id, {**params, "count": "fast", "limit": 10})
        count = fast["count"]
        assert (count["kind"], count["exact"], fast["total"]) == ("at_least", False, None), params
        # a true lower bound: the rows shown, never more than match
        assert len(fast["samples"]) + 1 <= count["value"] <= len(want), params
        assert [s["id"] for s in fast["samples"]] == want[:10], params
        assert fast["run_total"] == 240
        exact = _get(api, run_id, {**params, "count": "exact", "limit": 1})
        assert exact["count"] == {"value": len(want), "exact": True, "kind": "exact"}, params
        assert exact["total"] == len(want)
        again = _get(api, run_id, {**params, "count": "fast", "limit": 10})
        assert again["count"]["kind"] == "exact" and again["total"] == len(want), params
    for params in INDEXED:
        want = brute(server_store, run_id, params)
        fast = _get(api, run_id, {**params, "count": "fast", "limit": 10})
        assert fast["count"] == {"value": len(want), "exact": True, "kind": "exact"}, params


def test_a_fast_count_reads_the_first_samples_only(
    api: TestClient, server_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound counts the matches among the run's first ``COUNT_PREFIX`` samples in dataset
    order, in a statement bounded by ``LIMIT`` (and so does every other one the look runs)."""
    monkeypatch.setattr(table_queries, "COUNT_PREFIX", PREFIX)
    run_id = graded_run(server_store, 240)
    params = {"filter": "error"}
    first = brute(server_store, run_id, {"sort": "index"})[:PREFIX]
    in_prefix = len(set(first) & set(brute(server_store, run_id, params)))
    asked: list[str] = []
    query = PostgresBackend.query

    def recorded(self: PostgresBackend, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        asked.append(sql)
        return query(self, sql, args)

    monkeypatch.setattr(PostgresBackend, "query", recorded)
    fast = _get(api, run_id, {**params, "count": "fast", "limit": 1})
    assert fast["count"]["value"] == max(in_prefix, 2)
    filtered = [sql for sql in asked if "FROM samples s" in sql and "e.run_id" in sql]
    assert filtered and all("LIMIT" in sql for sql in filtered), filtered


def test_the_last_page_by_offset_counts_itself(
    api: TestClient, server_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_queries, "COUNT_PREFIX", PREFIX)
    run_id = graded_run(server_store, 240)
    params = {"filter": "error"}
    want = brute(server_store, run_id, params)
    last = _get(api, run_id, {**params, "count": "fast", "limit": 10, "offset": len(want) - 3})
    assert [s["id"] for s in last["samples"]] == want[-3:] and last["next"] is None
    assert last["count"] == {"value": len(want), "exact": True, "kind": "exact"}
    past = _get(api, run_id, {**params, "count": "fast", "limit": 10, "offset": len(want) + 5})
    assert past["samples"] == [] and past["count"]["value"] <= len(want)


def test_a_short_run_is_counted_exactly(api: TestClient, server_store: str) -> None:
    run_id = graded_run(server_store, 60)  # under COUNT_PREFIX: counting it is a page's cost
    for params in UNINDEXED:
        want = brute(server_store, run_id, params)
        fast = _get(api, run_id, {**params, "count": "fast", "limit": 5})
        assert fast["count"] == {"value": len(want), "exact": True, "kind": "exact"}, params
        assert fast["total"] == len(want)


def test_a_count_asked_of_no_known_kind_is_refused(api: TestClient, server_store: str) -> None:
    run_id = graded_run(server_store, 10)
    answer = api.get(f"/api/runs/{run_id}/samples", params={"count": "about"})
    assert answer.status_code == 422 and "count" in answer.text


def test_sqlite_answers_carry_the_exact_count(tmp_path: Path) -> None:
    """SQLite's in-memory index counts every answer: the same ``count`` shape, always exact,
    whether the page came from the index or (while it is built) straight from the store."""
    location = str(tmp_path / "runs.db")
    run_id = graded_run(location, 120)
    app = create_app(location, ServerSettings(dataset_roots=(tmp_path,)))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        plain = _get(client, run_id, {"count": "fast", "limit": 5})
        assert plain["count"] == {"value": 120, "exact": True, "kind": "exact"}
        for params in [*UNINDEXED, *INDEXED]:
            want = brute(location, run_id, params)
            for count in ("fast", "exact"):
                body = _get(client, run_id, {**params, "count": count, "limit": 5})
                assert body["indexed"] is True
                assert body["count"] == {"value": len(want), "exact": True, "kind": "exact"}
                assert body["total"] == len(want), params
    app.state.manager.shutdown()
