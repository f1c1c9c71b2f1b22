"""The sample table's search, filters and sort, and the side-by-side comparison, over HTTP."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from tests.server.test_server_api import finished_run, store_of

from aieval import run
from aieval.scorers import exact_match


@pytest.fixture
def server_store(store_location: str) -> str:
    """These tests run on both backends: an SQLite file, then a PostgreSQL database."""
    return store_location


def qa_body(name: str, predictions: list[str]) -> dict[str, Any]:
    rows = [
        {
            "id": f"r{i}",
            "prompt": f"question {i} about {('cats', 'dogs')[i % 2]}",
            "expected": "yes please",
            "prediction": p,
            "metadata": {"topic": ("cats", "dogs")[i % 2], **({"hard": True} if i < 2 else {})},
        }
        for i, p in enumerate(predictions)
    ]
    return {"name": name, "dataset": {"rows": rows}, "scorers": ["exact_match", "token_f1"]}


PREDICTIONS = ["yes please", "no", "yes", "yes please now", "nope never"]


async def samples(client: httpx.AsyncClient, run_id: str, **params: Any) -> dict[str, Any]:
    response = await client.get(f"/api/runs/{run_id}/samples", params=params)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_rows_carry_texts_and_each_scorer(client: httpx.AsyncClient) -> None:
    run_id = await finished_run(client, qa_body("t", PREDICTIONS))
    data = await samples(client, run_id)
    first = data["samples"][0]
    assert first["input"] == "question 0 about cats" and first["prediction"] == "yes please"
    assert first["expected"] == "yes please" and set(first["scores"]) == {"exact_match", "token_f1"}
    assert data["scorers"] == ["exact_match", "token_f1"] and "topic" in data["metadata_keys"]


@pytest.mark.parametrize(
    ("params", "ids"),
    [
        pytest.param({"q": "DOGS"}, ["r1", "r3"], id="search-input"),
        pytest.param({"q": "never"}, ["r4"], id="search-prediction"),
        pytest.param({"filter": "passed"}, ["r0"], id="passed"),
        pytest.param({"scorer": "token_f1", "min": 0.5, "max": 0.99}, ["r2", "r3"], id="range"),
        pytest.param({"meta": "hard"}, ["r0", "r1"], id="metadata-key"),
        pytest.param({"meta": "topic=dogs", "filter": "failed"}, ["r1", "r3"], id="meta-value"),
    ],
)
async def test_search_and_filters(
    client: httpx.AsyncClient, params: dict[str, Any], ids: list[str]
) -> None:
    run_id = await finished_run(client, qa_body("t", PREDICTIONS))
    data = await samples(client, run_id, **params)
    assert [s["id"] for s in data["samples"]] == ids and data["total"] == len(ids)
    assert data["run_total"] == len(PREDICTIONS)


async def test_sort_by_a_scorer_both_ways(client: httpx.AsyncClient) -> None:
    run_id = await finished_run(client, qa_body("t", PREDICTIONS))
    up = await samples(client, run_id, sort="score:token_f1", order="asc")
    down = await samples(client, run_id, sort="score:token_f1", order="desc")
    values = [s["scores"]["token_f1"] for s in up["samples"]]
    assert values == sorted(values) and values[-1] == 1.0
    assert down["samples"][0]["id"] == "r0"


@pytest.mark.parametrize(
    "params",
    [{"sort": "score:nope"}, {"sort": "colour"}, {"scorer": "nope"}],
    ids=["unknown-scorer-sort", "unknown-column", "unknown-scorer-range"],
)
async def test_bad_table_queries_are_named(
    client: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    run_id = await finished_run(client, qa_body("t", PREDICTIONS))
    response = await client.get(f"/api/runs/{run_id}/samples", params=params)
    assert response.status_code == 422
    assert response.json()["message"].split(":")[0] in ("sort", "scorer")


async def test_side_by_side_sample_with_a_word_diff(client: httpx.AsyncClient) -> None:
    base = await finished_run(client, qa_body("t", PREDICTIONS))
    cand = await finished_run(client, qa_body("t", ["yes please", "no thanks", *PREDICTIONS[2:]]))
    response = await client.get(
        "/api/compare/samples/r1", params={"baseline": base, "candidate": cand}
    )
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["baseline"]["prediction"] == "no" and data["candidate"]["prediction"] == "no thanks"
    assert data["diff"]["segments"] == [["equal", "no"], ["insert", " thanks"]]
    assert set(data["candidate"]["scores"]) == {"exact_match", "token_f1"}
    missing = await client.get(
        "/api/compare/samples/zz", params={"baseline": base, "candidate": cand}
    )
    assert missing.status_code == 404


async def test_pages_in_dataset_order_come_from_the_store_while_indexing(
    make_app: Any, monkeypatch: pytest.MonkeyPatch, server_store: str
) -> None:
    """Until the index is built, plain pages are read from SQLite (``indexed: false``) with
    the same rows, counts and scorers; a search waits for the index and answers in full."""
    if server_store.startswith("postgresql"):
        pytest.skip("a PostgreSQL store answers the table in SQL: no index is built")
    from aieval.server._table import SampleIndex

    gate = threading.Event()
    build = SampleIndex._build

    def held(index: SampleIndex, *args: Any) -> None:
        gate.wait(30)
        build(index, *args)

    monkeypatch.setattr(SampleIndex, "_build", held)
    transport = httpx.ASGITransport(app=make_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        run_id = await finished_run(client, qa_body("t", PREDICTIONS))
        header = (await client.get(f"/api/runs/{run_id}/header")).json()
        assert header["run"]["id"] == run_id and header["run"]["status"] == "completed"
        assert header["samples"] == len(PREDICTIONS) and header["target_errors"] == 0
        cold = [await samples(client, run_id, limit=2, offset=k) for k in (0, 2)]
        assert [page["indexed"] for page in cold] == [False, False]
        search = asyncio.ensure_future(samples(client, run_id, q="dogs"))
        await asyncio.sleep(0.2)
        assert not search.done()  # waits for the index, never answers from a partial one
        gate.set()
        assert [s["id"] for s in (await search)["samples"]] == ["r1", "r3"]
        warm = [await samples(client, run_id, limit=2, offset=k) for k in (0, 2)]
    assert [page["indexed"] for page in warm] == [True, True]
    for page in (*cold, *warm):
        page.pop("indexed")
    assert cold == warm
    assert [s["id"] for s in cold[0]["samples"] + cold[1]["samples"]] == ["r0", "r1", "r2", "r3"]


async def test_a_configured_scorer_without_values_is_a_sort_and_filter_key(
    client: httpx.AsyncClient,
) -> None:
    def broken(prompt: str) -> str:
        raise RuntimeError("target down")

    rows = [{"id": f"e{i}", "prompt": "?", "expected": "yes"} for i in range(3)]
    result = run(name="all-errored", dataset=rows, target=broken, scorers=[exact_match],
                 store=store_of(client).location)  # fmt: skip
    listed = (await client.get("/api/runs")).json()
    [item] = [r for r in listed["runs"] if r["id"] == result.id]
    assert item["metrics"] == {"exact_match": None}
    data = await samples(client, result.id, sort="score:exact_match", order="desc")
    assert [s["id"] for s in data["samples"]] == ["e0", "e1", "e2"]
    assert data["scorers"] == ["exact_match"]
    kept = await samples(client, result.id, scorer="exact_match", min=0.5)
    assert kept["total"] == 0 and kept["run_total"] == 3
    response = await client.get(f"/api/runs/{result.id}/samples", params={"sort": "score:f1"})
    assert response.status_code == 422 and "use one of ['exact_match']" in response.text
