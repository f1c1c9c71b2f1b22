"""The sample table's index against a brute-force pass over the stored rows, on both backends:
every search, filter and sort, paging at its edges, and a run that grows while it is viewed."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import GateOutcome
from aieval.core._threshold import threshold_verdict
from aieval.server._table import preview
from aieval.server._views import sample_item
from aieval.store import Store, TableReads

SCORERS: list[dict[str, Any]] = [
    {"name": n, "options": {}} for n in ("exact_match", "judge", "token_f1")
]


@pytest.fixture
def server_store(store_location: str) -> str:
    """These tests run on both backends: an SQLite file, then a PostgreSQL database."""
    return store_location


@pytest.fixture
def api(make_app: Callable[..., Any]) -> Iterator[TestClient]:
    with TestClient(make_app(), base_url="http://127.0.0.1:8765") as client:
        yield client


def record(i: int, rng: random.Random) -> SampleRecord:
    """A sample with a bit of everything the table shows: ties, gaps, errors, texts that are
    JSON or not ASCII, metadata keys on some samples only."""
    scores = {
        "exact_match": ScoreRecord(float(i % 3 == 0)),
        "token_f1": ScoreRecord(round(rng.random(), 1)),  # many ties
    }
    if i % 4 == 0:
        scores["judge"] = (
            ScoreRecord(0.0, unreadable="no verdict")
            if i % 8 == 0
            else (
                ScoreRecord(None, error="judge down") if i % 12 == 0 else ScoreRecord(rng.random())
            )
        )
    if i % 9 == 0:
        scores["token_f1"] = ScoreRecord(None)  # not applicable
    if i % 8 == 4:  # an earlier store's way of marking a malformed judge verdict
        scores["judge"] = ScoreRecord(0.0, metadata={"unreadable": "no JSON"})
    text: Any = {"question": f"Q{i}", "lang": "fr"} if i % 5 == 0 else f"Question {i} Café"
    if i % 23 == 0:
        text = None
    sample = SampleRecord(
        # epochs: pairs of samples share a dataset index and are told apart by id
        id=f"s{i // 2:03d}#{2 - i % 2}",
        index=i // 2,
        input=text,
        expected=f"answer {i % 7}",
        prediction=None if i % 13 == 0 else f"Straße {rng.choice(['yes', 'NO', 'maybe'])}",
        metadata={"topic": ("billing", "shipping", "accounts")[i % 3]}
        | ({"vip": True} if i % 10 == 0 else {}),
        scores=scores,
        error=f"target failed {i}" if i % 17 == 0 else ("" if i % 19 == 0 else None),
        passed=None if i % 11 == 0 else bool(i % 2),
        epoch=2 - i % 2,
    )
    if i % 3:  # graded and stored with a verdict, as runs are now (some with a gate failed)
        verdict = threshold_verdict(sample, 0.5, passed=sample.passed)
        gates = (GateOutcome("no_pii", i % 7 != 1, "found an email" if i % 7 == 1 else None),)
        sample.verdict = dataclasses.replace(verdict, gates=gates, weighted_score=i % 5 * 20.0)
    return sample


def write(location: str, run_id: str | None, numbers: list[int], seed: int = 0) -> str:
    """Store the samples ``numbers`` (in that order) in a new run or ``run_id``."""
    rng = random.Random(seed)
    with Store(location) as store:
        if run_id is None:
            run_id = store.create_run(name="table", config={"scorers": SCORERS})
        store.record_samples(run_id, [record(i, rng) for i in numbers])
    return run_id


def brute(location: str, run_id: str, params: dict[str, Any]) -> list[str]:
    """The ids the table must list for ``params``: every stored sample, one by one."""
    records = TableReads(Store(location).location).records(run_id)
    rows = [(sample_item(r), r) for r in records]
    q = str(params.get("q", "")).lower()
    outcome, scorer, meta = params.get("filter", "all"), params.get("scorer"), params.get("meta")

    def keep(item: dict[str, Any], rec: SampleRecord) -> bool:
        problems = item["error"] or item["score_errors"] or item["malformed"]
        if outcome == "passed" and item["passed"] is not True:
            return False
        if outcome == "failed" and item["passed"] is True:
            return False
        if outcome == "error" and not problems:
            return False
        if outcome == "no_error" and problems:
            return False
        if outcome == "gate_failed" and not item["gate_failures"]:
            return False
        texts = (rec.input, rec.prediction, rec.expected)
        if q and q not in "\n".join(preview(t, 1 << 20) for t in texts).lower():
            return False
        if scorer is not None:
            value = item["scores"].get(scorer)
            if not isinstance(value, int | float):
                return False
            if "min" in params and value < params["min"]:
                return False
            if "max" in params and value > params["max"]:
                return False
        if meta is not None:
            key, eq, want = meta.partition("=")
            found = {str(k): preview(v, 200) for k, v in rec.metadata.items()}
            return key in found and (not eq or found[key] == want)
        return True

    kept = [item for item, rec in rows if keep(item, rec)]
    sort = params.get("sort", "index")

    def key(item: dict[str, Any]) -> Any:
        if sort.startswith("score:"):
            return item["scores"].get(sort.removeprefix("score:"))
        return item[sort]

    present = [item for item in kept if key(item) is not None]
    present.sort(key=key, reverse=params.get("order") == "desc")
    return [item["id"] for item in present + [item for item in kept if key(item) is None]]


def listed(api: TestClient, run_id: str, params: dict[str, Any]) -> tuple[list[str], int]:
    """The ids and total the index answers (a sorted request first waits for the index)."""
    assert api.get(f"/api/runs/{run_id}/samples", params={"sort": "id"}).status_code == 200
    response = api.get(f"/api/runs/{run_id}/samples", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["indexed"] is True
    return [s["id"] for s in data["samples"]], data["total"]


SORTS = ["index", "id", "weighted_score", "passed", "error", "input", "prediction"]
SORTS += ["score:exact_match", "score:token_f1", "score:judge"]
QUERIES: list[dict[str, Any]] = [
    *({"sort": s, "order": o} for s in SORTS for o in ("asc", "desc")),
    *({"filter": f} for f in ("passed", "failed", "error", "no_error", "gate_failed")),
    {"q": "café"},
    {"q": "STRASSE"},
    {"q": "straße no"},
    {"q": '"lang": "fr"'},
    {"q": "answer 3", "filter": "failed", "sort": "score:token_f1", "order": "desc"},
    {"q": "5\nstraße"},  # across two fields of one sample: input ends, prediction starts
    {"q": "nothing like this"},
    {"scorer": "token_f1", "min": 0.3, "max": 0.6},
    {"scorer": "judge", "min": 0.5},
    {"scorer": "exact_match", "max": 0.0, "sort": "id", "order": "desc"},
    {"meta": "vip"},
    {"meta": "topic=shipping", "filter": "passed"},
    {"meta": "vip=true"},
    {"meta": "topic=nowhere"},
    {"meta": "absent"},
]


def test_every_query_equals_a_brute_force_pass(api: TestClient, server_store: str) -> None:
    numbers = list(range(240))
    random.Random(7).shuffle(numbers)  # stored out of dataset order, as concurrency does
    run_id = write(server_store, None, numbers)
    for params in QUERIES:
        want = brute(server_store, run_id, params)
        assert listed(api, run_id, params) == (want, len(want)), params
    assert len(listed(api, run_id, {})[0]) == 240
    # the data holds every case: gate failures, malformed verdicts, samples without a value
    for params in ({"filter": "gate_failed"}, {"filter": "error"}, {"meta": "vip"}):
        assert 0 < len(brute(server_store, run_id, params)) < 240


def test_pages_cover_the_list_once_at_every_edge(api: TestClient, server_store: str) -> None:
    run_id = write(server_store, None, list(range(103)))
    want = brute(server_store, run_id, {"sort": "score:token_f1", "order": "desc"})
    pages = []
    for offset in range(0, 110, 10):
        response = api.get(
            f"/api/runs/{run_id}/samples",
            params={"sort": "score:token_f1", "order": "desc", "limit": 10, "offset": offset},
        )
        data = response.json()
        assert data["total"] == 103 and data["offset"] == offset and data["limit"] == 10
        pages.append([s["id"] for s in data["samples"]])
    assert [len(p) for p in pages] == [10] * 10 + [3]
    assert [i for page in pages for i in page] == want
    for offset, size in [(102, 1), (103, 0), (5000, 0), (0, 103)]:
        response = api.get(
            f"/api/runs/{run_id}/samples",
            params={"sort": "score:token_f1", "order": "desc", "limit": 200, "offset": offset},
        )
        assert [s["id"] for s in response.json()["samples"]] == want[offset : offset + size]
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}):
        assert api.get(f"/api/runs/{run_id}/samples", params=bad).status_code == 422


def test_rows_are_the_sample_items_in_the_asked_order(api: TestClient, server_store: str) -> None:
    run_id = write(server_store, None, list(range(40)))
    response = api.get(
        f"/api/runs/{run_id}/samples", params={"sort": "input", "order": "desc", "limit": 1000}
    )
    rows = response.json()["samples"]
    by_id = {r.id: sample_item(r) for r in TableReads(Store(server_store).location).records(run_id)}
    assert rows == [by_id[row["id"]] for row in rows] and len(rows) == 40


def test_a_run_that_grows_while_viewed(api: TestClient, server_store: str) -> None:
    """Each look after new samples are stored lists them; the index reads only the new ones
    (what it read before stays), and a store that lost a sample is read again from the start."""
    run_id = write(server_store, None, list(range(0, 60)))
    params = {"sort": "score:token_f1", "q": "straße"}
    assert listed(api, run_id, params)[0] == brute(server_store, run_id, params)
    for start, end in ((60, 90), (90, 91), (91, 120)):
        write(server_store, run_id, list(range(start, end)))
        for query in (params, {"meta": "vip"}, {"filter": "failed", "sort": "id"}):
            assert listed(api, run_id, query)[0] == brute(server_store, run_id, query), query
    assert listed(api, run_id, {})[1] == 120
    with Store(server_store) as store:  # one sample replaced: same count, new position
        store._write("DELETE FROM samples WHERE run_id = ? AND sample_id = ?", (run_id, "s010#2"))
    write(server_store, run_id, [20], seed=5)
    for query in (params, {"sort": "weighted_score", "order": "desc"}):
        ids, total = listed(api, run_id, query)
        assert (ids, total) == (brute(server_store, run_id, query), len(ids)), query
    assert listed(api, run_id, {})[1] == 120
