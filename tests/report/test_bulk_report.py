"""Reports of runs of plain verdicts are read as columns, with the numbers of the record path.

The golden fixture (judges, target errors, n/a and unscored samples, rows' own checks, slices,
epochs) is reported both ways on each backend; a run with a graded verdict, or a row stored
before the typed verdict columns, is read sample by sample.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.report.golden.fixture import PAIRS, build_store

from aieval.report import build_report
from aieval.store import Store

PLAIN = [run for kind in ("ungraded", "epochs") for run in PAIRS[kind]]
GRADED = list(PAIRS["graded"])


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    built = build_store(store_location)
    try:
        yield built
    finally:
        built.close()


def _report(store: Store, run_id: str) -> Any:
    data = build_report(store, run_id, slice_by=["topic", "nested.level"]).to_dict()
    return json.loads(json.dumps(data, sort_keys=True))


def _record_path(store: Store, monkeypatch: pytest.MonkeyPatch, run_id: str) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(Store, "plain_run", lambda self, run: False)
        return _report(store, run_id)


def test_plain_runs_report_the_record_paths_numbers(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for run_id in PLAIN:
        assert store.plain_run(run_id), run_id
        bulk = _report(store, run_id)
        assert bulk == _record_path(store, monkeypatch, run_id), run_id
        assert bulk["samples"] > 700 and bulk["failure_reasons"]
        assert bool(bulk["judges"]) == (run_id in PAIRS["ungraded"])


def test_graded_runs_are_read_sample_by_sample(store: Store) -> None:
    for run_id in GRADED:
        assert not store.plain_run(run_id)
        assert _report(store, run_id)["graded"] is True


def test_the_typed_columns_hold_each_stored_verdict(store: Store) -> None:
    for run_id in (*PLAIN, *GRADED):
        for sample in store.iter_samples(run_id, texts=False):
            row = store._read_one(
                "SELECT weighted_score, verdict_passed, verdict_plain FROM samples"
                " WHERE run_id = ? AND sample_id = ?",
                (run_id, sample.id),
            )
            verdict = sample.verdict
            assert verdict is not None and row is not None
            assert row[0] == verdict.weighted_score
            assert row[1] == int(verdict.passed)
            assert row[2] == int(run_id not in GRADED)


def test_a_copied_run_keeps_its_columns(store: Store, tmp_path: Any) -> None:
    run_id = PLAIN[0]
    with Store(str(tmp_path / "copy.db")) as copy:
        copy.import_run(store.get_run(run_id), store.stored_samples(run_id))
        assert copy.plain_run(run_id)
        assert _report(copy, run_id) == _report(store, run_id)


def test_a_row_stored_before_the_columns_sends_the_run_to_the_record_path(
    store: Store,
) -> None:
    run_id = PLAIN[0]
    before = _report(store, run_id)
    first = next(store.iter_samples(run_id, texts=False)).id
    store._write(
        "UPDATE samples SET weighted_score = NULL, verdict_passed = NULL, verdict_plain = NULL"
        " WHERE run_id = ? AND sample_id = ?",
        (run_id, first),
    )
    assert not store.plain_run(run_id)
    assert _report(store, run_id) == before


def test_pages_and_scorer_queries_of_any_size_read_the_same_numbers(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aieval.store import _column_reads

    for run_id in PLAIN:
        whole = _report(store, run_id)
        with monkeypatch.context() as patch:
            # pages of 7 rows, one scorer per query: every page and query boundary crossed
            patch.setattr(_column_reads, "_PAGE_ROWS", 7)
            patch.setattr(_column_reads, "_SCORERS_PER_QUERY", 1)
            assert _report(store, run_id) == whole, run_id
        columns = store.sample_columns(run_id, metadata=True)
        assert len(columns.scores) > 1 and len(columns) == whole["samples"]
        assert columns.metadata_codes is not None and columns.metadata_texts is not None
        assert len(columns.metadata_codes) == len(columns)
        assert len(columns.metadata_texts) == len(set(columns.metadata_texts))
