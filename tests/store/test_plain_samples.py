"""Plain samples written as columns (``Store.record_plain``) store the very rows their records
store (``Store.record_samples``): samples, scores, the verdict's text and columns, the kept
columns."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from aieval import Store
from aieval.core import Reason
from aieval.store import PlainSamples
from aieval.store._schema import GRADED_COLUMNS, SAMPLE_COLUMNS, VERDICT_COLUMNS


def _batch(names: list[str]) -> PlainSamples:
    n = 40
    values = [[((i * 7 + k * 3) % 11) / 10 for i in range(n)] for k in range(len(names))]
    reasons: list[tuple[Reason, ...]] = []
    weighted: list[float] = []
    for i in range(n):
        row = [column[i] for column in values]
        reasons.append(
            tuple(
                Reason("threshold", name, f"{name} below the pass threshold 0.5")
                for name, v in zip(names, row, strict=True)
                if v < 0.5
            )
        )
        weighted.append(100.0 * sum(row) / len(row))
    return PlainSamples(
        ids=[f"s{i}" for i in range(n)],
        indexes=list(range(n)),
        inputs=[
            "lone \udc80 é" if i == 7 else f"q{i}" if i % 3 else {"messages": [{"content": "é"}]}
            for i in range(n)
        ],
        expected=[None if i == 5 else f"a{i}" for i in range(n)],
        predictions=[f"p{i}" for i in range(n)],
        metadata=[{"team": "t", "i": i} if i % 4 == 0 else {} for i in range(n)],
        scorers=names,
        values=values,
        reasons=reasons,
        weighted=weighted,
    )


def _tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    queries = {
        "samples": "SELECT * FROM samples ORDER BY idx",
        "scores": "SELECT * FROM scores ORDER BY rowid",
        "sample_values": "SELECT * FROM sample_values",
        "run_columns": "SELECT first_idx, first_id, n, head, body FROM run_columns",
    }
    with contextlib.closing(sqlite3.connect(db)) as conn:
        out = {}
        for table, query in queries.items():
            cursor = conn.execute(query)
            names = [c[0] for c in cursor.description]
            keep = [i for i, name in enumerate(names) if name not in ("run_id", "created_at")]
            out[table] = [tuple(row[i] for i in keep) for row in cursor.fetchall()]
        return out


@pytest.mark.parametrize(
    "names",
    [
        ["exact_match", "token_f1", "rouge_l"],
        ["é_score", "plain"],
        ["lone\udcff", "plain"],  # a reason UTF-8 cannot hold: the verdict as the records write it
    ],
)
def test_columns_store_the_rows_their_records_store(tmp_path: Path, names: list[str]) -> None:
    batch = _batch(names)
    written = {}
    for how in ("columns", "records"):
        db = tmp_path / f"{how}.db"
        with contextlib.closing(Store(db)) as store:
            run_id = store.create_run(name="r", dataset_hash="h", n_examples=len(batch))
            if how == "columns":
                store.record_plain(run_id, batch)
            else:
                store.record_samples(run_id, batch.records())
        written[how] = _tables(db)
    assert written["columns"] == written["records"]
    assert len(written["columns"]["samples"]) == 40
    assert len(written["columns"]["run_columns"]) == 1


def test_columns_store_the_rows_their_records_store_on_postgres(pg_url: str) -> None:
    batch = _batch(["exact_match", "é_score"])
    samples = ", ".join(
        c
        for c in (*SAMPLE_COLUMNS.split(", "), *VERDICT_COLUMNS, *GRADED_COLUMNS)
        if c not in ("run_id", "created_at")
    )
    queries = (
        f"SELECT {samples} FROM samples WHERE run_id = ? ORDER BY idx",
        "SELECT sample_id, scorer, value, raw, reason, error, metadata, unreadable FROM scores"
        " WHERE run_id = ? ORDER BY sample_id, scorer",
    )
    written = {}
    with Store(pg_url) as store:
        for how in ("columns", "records"):
            run_id = store.create_run(name=how, dataset_hash="h", n_examples=len(batch))
            if how == "columns":
                store.record_plain(run_id, batch)
            else:
                store.record_samples(run_id, batch.records())
            written[how] = [store._db.query(query, (run_id,)) for query in queries]
    assert written["columns"] == written["records"]
    assert [len(rows) for rows in written["columns"]] == [40, 80]
