"""A response or judge cache that cannot be written stops the run as a store failure (failed,
resumable, nothing lost), never recorded as the target's or the judge's error. Both backends;
the cache table refuses writes through a trigger, as a full disk or a broken store would."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import Any

import psycopg
import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store, run
from aieval.errors import StoreError
from aieval.providers import ResponseCache
from aieval.scorers import exact_match, llm_judge

ROWS = [{"id": f"q{i}", "prompt": f"say {i}", "expected": f"answer {i}"} for i in range(8)]
REFUSAL = "the cache refuses writes"


def _answer(body: dict[str, Any]) -> Reply:
    if "CANDIDATE_ANSWER" in json.dumps(body):  # a judge's request: a verdict
        return Reply(json.dumps({"score": 9, "reason": "right"}))
    return Reply(f"answer {body['messages'][-1]['content'].split()[-1]}")


def _sql(location: str, *statements: str) -> None:
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)
        return
    with closing(sqlite3.connect(location)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.commit()


def _refuse_cache_writes(location: str) -> None:
    cache = ResponseCache(location)
    assert len(cache) == 0  # the table exists
    cache.close()
    if location.startswith("postgresql://"):
        _sql(
            location,
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN RAISE EXCEPTION '{REFUSAL}'; END $$",
            "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON response_cache"
            " FOR EACH ROW EXECUTE FUNCTION refuse()",
        )
    else:
        _sql(
            location,
            "CREATE TRIGGER refuse BEFORE INSERT ON response_cache"
            f" BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
        )


def _allow_cache_writes(location: str) -> None:
    _sql(location, "DROP TRIGGER refuse" + (" ON response_cache" if "://" in location else ""))


def _failed_then_resumed(store_location: str, rows: list[dict[str, str]], **options: Any) -> None:
    _refuse_cache_writes(store_location)
    with pytest.raises(StoreError, match=f"response cache.*{REFUSAL}"):
        run(name="cached", dataset=rows, store=store_location, **options)
    with Store(store_location) as store:
        (failed,) = store.list_runs(name="cached")
        assert failed.status == "failed" and REFUSAL in (failed.error or "")
        kept = list(store.iter_samples(failed.id))
        # what was stored before the failure is kept, and none of it blames the model
        assert not any(s.error for s in kept)
        assert not any(v.error for s in kept for v in s.scores.values())
    _allow_cache_writes(store_location)
    resumed = run(name="cached", dataset=rows, store=store_location, resume=True, **options)
    assert resumed.id == failed.id and resumed.status == "completed"
    assert sorted(s.id for s in resumed.samples) == sorted(r["id"] for r in rows)
    assert not any(s.error for s in resumed.samples)
    with Store(store_location) as store:
        assert store.count_samples(failed.id) == len(rows)  # each once


def test_a_target_cache_write_failure_fails_the_run(
    store_location: str, openai_server: OpenAIServer
) -> None:
    openai_server.responder = _answer
    _failed_then_resumed(
        store_location,
        ROWS,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=openai_server.base_url,
        model="m",
        params={"temperature": 0},
    )


def test_a_judge_cache_write_failure_fails_the_run(
    store_location: str, openai_server: OpenAIServer
) -> None:
    openai_server.responder = _answer
    judge = llm_judge("Reward the right answer.", base_url=openai_server.base_url, model="j")
    rows = [{**row, "prediction": row["expected"]} for row in ROWS]  # recorded: no target call
    _failed_then_resumed(store_location, rows, scorers=[judge])
