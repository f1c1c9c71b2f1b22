"""The JSON API in-process (ASGI transport): runs, samples, bundle, compare, 404s."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tests.support.server import read_events, rows_body

from aieval.report import build_report, compare_runs
from aieval.store import Store


@pytest.fixture
def server_store(store_location: str) -> str:
    """These tests run on both backends: an SQLite file, then a PostgreSQL database."""
    return store_location


async def finished_run(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    """Start an evaluation and follow its events until the stream closes."""
    response = await client.post("/api/evaluations", json=body)
    assert response.status_code == 202, response.text
    run_id: str = response.json()["run_id"]
    async with client.stream("GET", response.json()["events_url"]) as stream:
        kinds = [e.event async for e in read_events(stream.aiter_lines()) if e.event]
    assert kinds[-1] == "run_completed"
    return run_id


def store_of(client: httpx.AsyncClient) -> Store:
    transport = client._transport
    assert isinstance(transport, httpx.ASGITransport)
    store: Store = transport.app.state.store  # type: ignore[attr-defined]
    return store


async def test_runs_list_counts_samples_and_pass_rate(client: httpx.AsyncClient) -> None:
    body = rows_body(6)
    rows = body["dataset"]["rows"]
    run_id = await finished_run(client, body)
    listing = (await client.get("/api/runs")).json()
    assert listing["total"] == 1 and listing["limit"] == 50 and listing["offset"] == 0
    (item,) = listing["runs"]
    right = sum(r["prediction"] == r["expected"] for r in rows)
    assert item["id"] == run_id and item["name"] == "qa" and item["status"] == "completed"
    assert item["samples"] == len(rows)
    assert item["pass_rate"] == pytest.approx(right / len(rows))
    assert set(item) == {
        "id", "name", "model", "provider", "status", "created_at", "finished_at", "samples",
        "pass_rate", "grades", "metrics", "errors", "state",
    }  # fmt: skip
    assert item["metrics"] == {"exact_match": pytest.approx(right / len(rows))}
    assert item["errors"] == {"target": 0, "scorers": 0} and item["state"] == "completed"


async def test_runs_list_filters_by_name_and_pages(client: httpx.AsyncClient) -> None:
    ids = [await finished_run(client, rows_body(2, name=name)) for name in ("a", "b", "a")]
    named = (await client.get("/api/runs", params={"name": "a"})).json()
    assert named["total"] == 2 and {r["id"] for r in named["runs"]} == {ids[0], ids[2]}
    page = (await client.get("/api/runs", params={"limit": 1, "offset": 1})).json()
    assert page["total"] == 3 and [r["id"] for r in page["runs"]] == [ids[1]]


async def test_run_bundle_is_the_report_of_the_stored_run(client: httpx.AsyncClient) -> None:
    run_id = await finished_run(client, rows_body(5))
    bundle = (await client.get(f"/api/runs/{run_id}")).json()
    assert bundle == build_report(store_of(client), run_id).to_dict()


@pytest.mark.parametrize(
    ("which", "keep"),
    [
        pytest.param("all", lambda r: True, id="all"),
        pytest.param("passed", lambda r: r["prediction"] == r["expected"], id="passed"),
        pytest.param("failed", lambda r: r["prediction"] != r["expected"], id="failed"),
        pytest.param("gate_failed", lambda r: False, id="gate_failed-ungraded"),
    ],
)
async def test_samples_filter(client: httpx.AsyncClient, which: str, keep: Any) -> None:
    body = rows_body(7)
    run_id = await finished_run(client, body)
    page = (await client.get(f"/api/runs/{run_id}/samples", params={"filter": which})).json()
    expected = [r["id"] for r in body["dataset"]["rows"] if keep(r)]
    assert [s["id"] for s in page["samples"]] == expected
    assert page["total"] == len(expected)
    for s in page["samples"]:
        assert s["weighted_score"] == (100.0 if s["passed"] else 0.0)
        assert s["gate_failures"] == [] and s["grade"] is None


async def test_samples_page_with_limit_and_offset(client: httpx.AsyncClient) -> None:
    run_id = await finished_run(client, rows_body(7))
    page = (await client.get(f"/api/runs/{run_id}/samples?limit=2&offset=3")).json()
    assert [s["index"] for s in page["samples"]] == [3, 4]
    assert (page["total"], page["limit"], page["offset"]) == (7, 2, 3)


async def test_sample_detail_has_every_field(client: httpx.AsyncClient) -> None:
    body = rows_body(3)
    run_id = await finished_run(client, body)
    row = body["dataset"]["rows"][1]
    detail = (await client.get(f"/api/runs/{run_id}/samples/{row['id']}")).json()
    assert set(detail) == {
        "id", "index", "input", "prompt", "expected", "prediction", "metadata", "scores", "error",
        "passed", "latency_s", "input_tokens", "output_tokens", "cost", "retries", "calls",
        "verdict", "workflow_run", "conversation",
    }  # fmt: skip
    assert detail["prompt"] == row["prompt"] and detail["prediction"] == row["prediction"]
    assert detail["expected"] == row["expected"]
    score = detail["scores"]["exact_match"]
    assert set(score) == {"value", "raw", "reason", "error", "malformed", "unreadable", "metadata"}
    assert score["malformed"] is None  # not a judge: never flagged
    assert detail["verdict"]["workflow"] is None and detail["workflow_run"] is None
    assert detail["conversation"] is None
    assert detail["verdict"]["grader"] == "threshold"
    assert detail["verdict"]["passed"] is detail["passed"]


async def test_compare_is_the_comparison_of_the_two_runs(client: httpx.AsyncClient) -> None:
    baseline = await finished_run(client, rows_body(6, name="cmp"))
    candidate = await finished_run(client, rows_body(6, name="cmp"))
    response = await client.get(
        "/api/compare", params={"baseline": baseline, "candidate": candidate}
    )
    assert response.status_code == 200
    expected = compare_runs(store_of(client), baseline, candidate).to_dict()
    assert response.json() == expected
    assert response.json()["decision"]["promote"] in (True, False)


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/runs/no-such-run", id="run"),
        pytest.param("/api/runs/no-such-run/samples", id="samples"),
        pytest.param("/api/runs/no-such-run/events", id="events"),
        pytest.param("/api/compare?baseline=no-such-run&candidate=no-such-run", id="compare"),
    ],
)
async def test_unknown_run_is_404_in_the_error_shape(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 404
    body = response.json()
    assert set(body) == {"message", "reasons"} and "no-such-run" in body["message"]


async def test_unknown_sample_is_404(client: httpx.AsyncClient) -> None:
    run_id = await finished_run(client, rows_body(2))
    response = await client.get(f"/api/runs/{run_id}/samples/nope")
    assert response.status_code == 404
    assert "nope" in response.json()["message"]


async def test_unknown_route_uses_the_error_shape(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/nothing-here")
    assert response.status_code == 404
    assert set(response.json()) == {"message", "reasons"}


async def test_viewer_page_is_served(client: httpx.AsyncClient) -> None:
    response = await client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    "enforce", [pytest.param(True, id="enforced"), pytest.param(False, id="off")]
)
async def test_enforce_hard_gates_reaches_the_stored_evaluations(
    client: httpx.AsyncClient, enforce: bool
) -> None:
    body = {
        "name": "cr",
        "dataset": "workflows/code_review_runs",
        "workflow": "workflows/code_review.yaml",
        "enforce_hard_gates": enforce,
    }
    run_id = await finished_run(client, body)
    gated = (await client.get(f"/api/runs/{run_id}/samples?filter=gate_failed")).json()
    assert gated["total"] > 0
    for row in gated["samples"]:
        detail = (await client.get(f"/api/runs/{run_id}/samples/{row['id']}")).json()
        evaluation = detail["verdict"]["workflow"]
        assert evaluation["hard_gates_enforced"] is enforce
        assert row["gate_failures"] == [g for g, ok in evaluation["hard_gates"].items() if not ok]
        if enforce:
            assert row["grade"] == "F" and row["passed"] is False
    if not enforce:
        assert any(row["passed"] for row in gated["samples"])


async def test_static_paths_do_not_escape(client: httpx.AsyncClient) -> None:
    for path in ("/static/../../pyproject.toml", "/static/%2e%2e/%2e%2e/pyproject.toml"):
        response = await client.get(path)
        assert response.status_code == 404
        assert "[project]" not in response.text
