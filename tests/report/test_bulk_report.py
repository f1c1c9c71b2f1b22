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
from tests.report.golden.fixture import PAIRS

from aieval.report import build_report
from aieval.store import Store

PLAIN = [run for kind in ("ungraded", "epochs") for run in PAIRS[kind]]
GRADED = list(PAIRS["graded"])


@pytest.fixture
def store(golden_copy: str) -> Iterator[Store]:
    built = Store(golden_copy)
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def _usage_run(store: Store) -> str:
    """A plain run whose calls report their tokens, or not: a target call and a judge call
    without usage, a failed call, a sample without calls whose target reported its own."""
    from aieval._records import CallRecord, SampleRecord, ScoreRecord
    from aieval.core._threshold import threshold_verdict

    run_id = store.create_run(name="usage", model="m", provider="recorded", dataset="d.jsonl")

    def call(purpose: str, i: int | None, o: int | None, error: str | None = None) -> CallRecord:
        return CallRecord(purpose=purpose, input_tokens=i, output_tokens=o, error=error)

    calls = [
        [call("target", 10, 2), call("judge:j", 30, 3)],
        [call("target", None, None), call("judge:j", 40, None)],
        [call("target", 7, None, error="TimeoutError"), call("target", 5, 1)],
        [],
        [],
    ]
    samples = []
    for n, made in enumerate(calls):
        sample = SampleRecord(id=f"s{n}", index=n, input={"n": n}, prediction="p")
        sample.calls = made
        if n == 3:
            sample.input_tokens, sample.output_tokens = 100, None
        sample.scores = {"exact": ScoreRecord(1.0)}
        sample.verdict = threshold_verdict(sample, 0.5)
        sample.passed = sample.verdict.passed
        samples.append(sample)
    store.record_samples(run_id, samples)
    store.finish_run(run_id, status="completed", metrics={})
    return run_id


def test_tokens_of_calls_without_usage_are_counted_unreported_both_ways(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _usage_run(store)
    assert store.plain_run(run_id)
    bulk = _report(store, run_id)
    assert bulk == _record_path(store, monkeypatch, run_id)
    # a failed call's reported tokens count, the call does not (it did not answer)
    target = {"input": 122, "output": 3, "total": 125}
    judges = {"input": 70, "output": 3, "total": 73}
    assert bulk["tokens"] == {
        "input": None,
        "output": None,
        "total": None,
        "at_least": {"input": 192, "output": 6, "total": 198},
        "calls": 6,
        "unreported_calls": 3,
        "target": dict.fromkeys(target) | {"at_least": target, "calls": 4, "unreported_calls": 2},
        "judges": dict.fromkeys(judges) | {"at_least": judges, "calls": 2, "unreported_calls": 1},
    }


def test_the_sums_in_python_are_the_sums_in_sql(store: Store) -> None:
    # what a run whose sums pass SQLite's 64 bits is summed with
    for run_id in (*PLAIN, *GRADED, _usage_run(store)):
        assert store._exact_sums(run_id) == store._sql_sums(run_id), run_id
