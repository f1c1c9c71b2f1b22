"""The sample table of a PostgreSQL store, answered in SQL: the same rows as a brute-force
pass, page tokens that cover an answer once, and no page load that scans a whole table
(``EXPLAIN`` on a seeded, analysed store)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.server.test_server_table_index import QUERIES, SCORERS, brute, listed, record

from aieval._records import SampleRecord
from aieval.core import GateOutcome
from aieval.core._threshold import threshold_verdict
from aieval.store import Store, TableQueries
from aieval.store._postgres import PostgresBackend

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture
def server_store(pg_url: str) -> str:
    return pg_url


@pytest.fixture
def api(make_app: Callable[..., Any]) -> Iterator[TestClient]:
    with TestClient(make_app(), base_url="http://127.0.0.1:8765") as client:
        yield client


def graded(i: int, rng: random.Random) -> SampleRecord:
    """The index tests' sample, every one stored with its verdict (as runs are now)."""
    sample = record(i, rng)
    if sample.verdict is None:
        sample.verdict = threshold_verdict(sample, 0.5, passed=sample.passed)
    return sample


def graded_run(location: str, n: int) -> str:
    numbers = list(range(n))
    random.Random(3).shuffle(numbers)  # stored out of dataset order
    rng = random.Random(0)
    with Store(location) as store:
        run_id = store.create_run(name="table", config={"scorers": SCORERS})
        store.record_samples(run_id, [graded(i, rng) for i in numbers])
    return run_id


#: a search's wildcards match themselves
ESCAPED: list[dict[str, Any]] = [{"q": "%"}, {"q": "_"}, {"q": "n\\"}, {"q": "q%s_"}]


def test_sql_answers_equal_a_brute_force_pass(api: TestClient, server_store: str) -> None:
    run_id = graded_run(server_store, 240)
    assert TableQueries(Store(server_store).location).answers(run_id)
    for params in [*QUERIES, *ESCAPED]:
        want = brute(server_store, run_id, params)
        assert listed(api, run_id, params) == (want, len(want)), params
    first = api.get(f"/api/runs/{run_id}/samples", params={"q": "café"}).json()
    assert first["search"] == "trigram"  # the test server's role may create pg_trgm


def test_search_without_pg_trgm_reads_the_run_and_says_so(
    pg_url: str,
    make_app: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A store whose role may not create the extension: opening it warns and goes on, and a
    search answers the same rows, marked ``"search": "scan"``."""
    import aieval.store._postgres as postgres

    refused = "CREATE EXTENSION IF NOT EXISTS aieval_no_such_extension;"
    monkeypatch.setattr(postgres, "POSTGRES_TEXT_SEARCH", refused)
    with caplog.at_level("WARNING", logger="aieval"):
        run_id = graded_run(pg_url, 60)
    assert "no trigram index" in caplog.text and "CREATE EXTENSION pg_trgm" in caplog.text
    with TestClient(make_app(), base_url="http://127.0.0.1:8765") as api:
        for params in ({"q": "straße"}, {"q": "café", "sort": "score:token_f1"}):
            body = api.get(f"/api/runs/{run_id}/samples", params={**params, "limit": 100}).json()
            assert body["search"] == "scan"
            assert [s["id"] for s in body["samples"]] == brute(pg_url, run_id, params)


PAGED: list[dict[str, Any]] = [
    {},
    {"sort": "index", "order": "desc"},
    {"sort": "id", "order": "desc"},
    {"sort": "score:token_f1", "order": "desc"},  # ties, and samples without a value last
    {"sort": "score:judge"},
    {"sort": "weighted_score", "order": "desc", "filter": "failed"},
    {"sort": "passed"},
    {"sort": "input", "order": "desc"},
    {"q": "straße", "sort": "score:exact_match"},
]


def test_page_tokens_cover_each_answer_once(api: TestClient, server_store: str) -> None:
    run_id = graded_run(server_store, 120)
    path = f"/api/runs/{run_id}/samples"
    for params in PAGED:
        want = brute(server_store, run_id, params)
        seen: list[str] = []
        after = None
        for _ in range(100):
            data = api.get(
                path, params={**params, "limit": 7, **({"after": after} if after else {})}
            )
            assert data.status_code == 200, data.text
            body = data.json()
            assert body["total"] == len(want) and body["run_total"] == 120
            seen += [s["id"] for s in body["samples"]]
            after = body["next"]
            if after is None:
                break
        assert seen == want, params
        by_offset = [
            s["id"]
            for offset in range(0, len(want) + 7, 7)
            for s in api.get(path, params={**params, "limit": 7, "offset": offset}).json()[
                "samples"
            ]
        ]
        assert by_offset == want, params
    token = api.get(path, params={"sort": "id", "limit": 5}).json()["next"]
    for bad in (token, "not-a-token", "W10"):  # another sort's token; not base64 JSON; []
        answer = api.get(path, params={"sort": "index", "after": bad})
        assert answer.status_code == 422 and "after" in answer.text, bad


# the seeded store: runs of samples made in the database, as a team's history is
_RUNS, _PER_RUN = 20, 1000
_SEED_SAMPLES = """
INSERT INTO samples (run_id, sample_id, idx, input, expected, prediction, metadata, error,
                     passed, created_at, verdict, weighted_score, verdict_passed, verdict_plain)
SELECT r.id, 's' || lpad(i::text, 6, '0'), i,
       to_json('Question ' || i || ' about ' || (ARRAY['refunds', 'billing', 'login'])[i %% 3 + 1]
               || CASE WHEN i %% 97 = 0 THEN ' zebrafish' ELSE '' END)::text,
       '"answer"', 'answer ' || (i %% 7),
       '{"topic": "' || (ARRAY['billing', 'shipping', 'accounts'])[i %% 3 + 1] || '"}',
       CASE WHEN i %% 50 = 0 THEN 'target failed' END,
       (i %% 3 <> 0)::int, 0,
       CASE WHEN i %% 3 <> 0 THEN %(passed)s ELSE %(failed)s END,
       (i %% 5) * 20.0, (i %% 3 <> 0)::int, 1
FROM runs r CROSS JOIN generate_series(0, %(n)s - 1) AS i
"""
_SEED_SCORES = """
INSERT INTO scores (run_id, sample_id, scorer, value)
SELECT s.run_id, s.sample_id, n.scorer,
       CASE n.scorer WHEN 'exact_match' THEN (s.idx %% 3 <> 0)::int ELSE (s.idx %% 11) / 10.0 END
FROM samples s CROSS JOIN (VALUES ('exact_match'), ('token_f1')) AS n(scorer)
"""


def seeded(location: str) -> list[str]:
    """A store of ``_RUNS`` runs of ``_PER_RUN`` samples (two scores each), analysed."""
    import json

    def verdict(passed: bool) -> str:
        sample = SampleRecord(id="x", index=0, input="", passed=passed)
        made = threshold_verdict(sample, 0.5, passed=passed)
        if not passed:  # the failed samples failed a gate too
            made = dataclasses.replace(made, gates=(GateOutcome("no_pii", False, "an email"),))
        return json.dumps(made.to_dict())

    with Store(location) as store:
        runs = [
            store.create_run(name=f"nightly-{k}", config={"scorers": SCORERS}) for k in range(_RUNS)
        ]
    import psycopg

    with psycopg.connect(Store(location).location.connect_url(), autocommit=True) as conn:
        conn.execute(
            _SEED_SAMPLES, {"passed": verdict(True), "failed": verdict(False), "n": _PER_RUN}
        )
        conn.execute(_SEED_SCORES.replace("%%", "%"))
        conn.execute("VACUUM ANALYZE")
    return runs


#: what a page load asks: the runs list, a run's table in each state, a sample's page
PAGE_LOADS: list[tuple[str, dict[str, Any]]] = [
    ("/api/runs", {}),
    ("/api/runs/{run}/header", {}),
    ("/api/runs/{run}/samples", {}),
    ("/api/runs/{run}/samples", {"sort": "score:token_f1", "order": "desc"}),
    ("/api/runs/{run}/samples", {"sort": "weighted_score"}),
    ("/api/runs/{run}/samples", {"filter": "failed"}),
    ("/api/runs/{run}/samples", {"filter": "error"}),
    ("/api/runs/{run}/samples", {"filter": "gate_failed"}),
    ("/api/runs/{run}/samples", {"meta": "topic=billing"}),
    ("/api/runs/{run}/samples", {"q": "zebrafish"}),
    ("/api/runs/{run}/samples", {"q": "refunds", "sort": "score:exact_match"}),
    ("/api/runs/{run}/samples", {"scorer": "token_f1", "min": 0.5}),
    ("/api/runs/{run}/samples", {"sort": "index", "order": "desc", "offset": 100}),
    ("/api/runs/{run}/sample", {"id": "s000042"}),
]


def test_no_page_load_scans_a_whole_table(
    api: TestClient, server_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each query a page load runs, explained on a store of 20,000 samples with real
    statistics, reads samples and scores through an index (never a Seq Scan): each table
    request as the viewer asks it first (``count=fast``, its count bounded on a prefix of the
    run) and as the exact count is asked after."""
    import aieval.store._table_queries as table_queries

    monkeypatch.setattr(table_queries, "COUNT_PREFIX", 100)  # the runs' 1,000: bounded
    runs = seeded(server_store)
    asked: list[tuple[str, tuple[Any, ...]]] = []
    query = PostgresBackend.query

    def recorded(self: PostgresBackend, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            asked.append((sql, tuple(args)))
        return query(self, sql, args)

    monkeypatch.setattr(PostgresBackend, "query", recorded)
    loads = [(path, {**params, "count": "fast"}) for path, params in PAGE_LOADS]
    # the fast look first: once the exact count is kept, a fast look finds it
    for path, params in [load for load in loads if load[0].endswith("/samples")] + PAGE_LOADS:
        answer = api.get(path.replace("{run}", runs[7]), params=params)
        assert answer.status_code == 200, (path, params, answer.text)
        body = answer.json()
        if "samples" in body and isinstance(body["samples"], list):
            assert body["samples"], (path, params)  # each query finds something to show
        if body.get("next"):  # the second page, by its token
            more = api.get(path.replace("{run}", runs[7]), params={**params, "after": body["next"]})
            assert more.status_code == 200 and more.json()["samples"]
    monkeypatch.setattr(PostgresBackend, "query", query)
    assert len(asked) > 20
    assert any("LIMIT ?) s WHERE" in sql for sql, _ in asked)  # a count bounded by a prefix
    backend = PostgresBackend(Store(server_store).location)
    try:
        for sql, args in asked:
            plan = "\n".join(str(row[0]) for row in backend.query("EXPLAIN " + sql, args))
            for table in ("samples", "scores"):
                assert f"Seq Scan on {table}" not in plan, f"{sql}\n{args}\n{plan}"
    finally:
        backend.close()
