"""The schema version on opening: a newer store is refused untouched, an older one migrated, a
current one opened without DDL (so a role with only data rights can run evals on it)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from typing import Any

import psycopg
import pytest
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store, run
from aieval.errors import StoreError
from aieval.providers import EmbeddingCache, OpenAIProvider, ResponseCache
from aieval.scorers import llm_judge
from aieval.store._schema import SCHEMA, SCHEMA_VERSION, table_names


def _sql(location: str, sql: str) -> list[tuple[Any, ...]]:
    """Run ``sql`` on the store's database directly (as its owner); its rows."""
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []
    with contextlib.closing(sqlite3.connect(location)) as db, db:
        return db.execute(sql).fetchall()


def _version(location: str) -> str:
    rows = _sql(location, "SELECT value FROM meta WHERE key = 'schema_version'")
    return str(rows[0][0])


def test_a_newer_store_is_refused_and_left_untouched(
    store_location: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Store(store_location).close()
    _sql(store_location, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    expected = (
        f"store schema 99 is newer than this aieval supports ({SCHEMA_VERSION}): upgrade aieval"
    )
    with pytest.raises(StoreError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        Store(store_location)
    with pytest.raises(StoreError, match="is newer than this aieval supports"):
        ResponseCache(store_location).get("k")
    with pytest.raises(StoreError, match="is newer than this aieval supports"):
        EmbeddingCache(store_location).get_many(["k"])
    monkeypatch.delenv("AIEVAL_DB", raising=False)
    listing = run_main(capsys, monkeypatch, "runs", "--db", store_location)
    assert listing.returncode != 0
    assert expected in listing.stderr
    assert _version(store_location) == "99"  # nothing written back


def test_an_unreadable_version_is_refused(store_location: str) -> None:
    Store(store_location).close()
    _sql(store_location, "UPDATE meta SET value = 'x' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="store schema version 'x' is not a number"):
        Store(store_location)
    assert _version(store_location) == "x"


def test_an_older_store_is_migrated_with_every_table(store_location: str) -> None:
    Store(store_location).close()
    _sql(store_location, "DROP TABLE response_cache")
    _sql(store_location, "UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    Store(store_location).close()
    assert _version(store_location) == str(SCHEMA_VERSION)
    assert _sql(store_location, "SELECT COUNT(*) FROM response_cache") == [(0,)]


def test_a_version_4_store_gains_the_run_order_and_a_run_dated_ahead_is_capped(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        first, ahead = store.create_run(name="qa"), store.create_run(name="qa")
    _sql(store_location, f"UPDATE runs SET created_at = 1e11 WHERE id = '{ahead}'")  # year 5138
    for column in ("ordered_at", "pushed_by"):  # what version 4 lacked
        _sql(store_location, f"ALTER TABLE runs DROP COLUMN {column}")
    _sql(store_location, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    with Store(store_location) as store:  # migrated in place: ordered by created_at, up to now
        assert _version(store_location) == str(SCHEMA_VERSION)
        assert [r.id for r in store.list_runs(name="qa")] == [ahead, first]
        third = store.create_run(name="qa")
        assert store.get_run("qa").id == third  # the run dated ahead is not the newest for good
        assert store.get_run(ahead).created_at == 1e11  # its header stays as stored
    assert _sql(store_location, f"SELECT pushed_by FROM runs WHERE id = '{third}'") == [(None,)]


def test_the_first_open_creates_every_table(store_location: str) -> None:
    Store(store_location).close()
    tables = table_names(SCHEMA)
    assert {"meta", "runs", "response_cache", "embedding_cache"} <= set(tables)
    for table in tables:
        expected = 1 if table == "meta" else 0  # the schema version
        assert _sql(store_location, f"SELECT COUNT(*) FROM {table}") == [(expected,)], table


def test_a_role_with_only_data_rights_runs_a_judged_eval(
    pg_url: str, openai_server: OpenAIServer
) -> None:
    Store(pg_url).close()  # the owner opens the store once
    _sql(
        pg_url,
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ciwriter') THEN"
        " CREATE ROLE ciwriter LOGIN PASSWORD 'ci-pw-1'; END IF; END $$",
    )
    for grant in (
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        "GRANT USAGE ON SCHEMA public TO ciwriter",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ciwriter",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ciwriter",
    ):
        _sql(pg_url, grant)
    writer = pg_url.replace("aieval@", "ciwriter:ci-pw-1@")
    assert _sql(writer, "SELECT has_schema_privilege('public', 'CREATE')") == [(False,)]
    openai_server.responder = lambda body: Reply(json.dumps({"score": 8, "reason": "ok"}))
    provider = OpenAIProvider(openai_server.base_url, api_key="sk-judge", name="judge")
    judge = llm_judge("Right?", provider=provider, model="m")
    rows = [
        {"id": f"r{i}", "prompt": f"q{i}", "prediction": "a", "expected": "a"} for i in range(3)
    ]
    with Store(writer) as store:
        result = run(name="ci", dataset=rows, scorers=[judge], store=store, concurrency=1)
    assert result.status == "completed" and result.error_count == 0
    assert result.metrics["llm_judge"] == pytest.approx(0.8)
    assert _sql(pg_url, "SELECT COUNT(*) FROM response_cache") == [(3,)]


def test_samples_and_calls_have_the_same_usage_columns(tmp_path: Any) -> None:
    """Both tables hold what a sample or a call cost, in the same columns, types and defaults."""
    conn = sqlite3.connect(tmp_path / "schema.db")
    try:
        conn.executescript(SCHEMA)
        usage = ("latency_s", "input_tokens", "output_tokens", "cost", "retries", "cached")

        def columns(table: str) -> dict[str, tuple[Any, ...]]:
            rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
            return {r[1]: (r[2], r[3], r[4]) for r in rows if r[1] in usage}

        assert columns("samples") == columns("model_calls")
        assert list(columns("samples")) == list(usage)
        assert columns("samples")["retries"] == ("INTEGER", 1, "0")
    finally:
        conn.close()
