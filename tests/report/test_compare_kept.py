"""Comparisons from the columns runs keep as they are written equal the column path's (the
rows read back) to the last digit, on each backend; a run whose kept columns do not cover its
stored samples (one written around the writer, a batch of epochs, a damaged row, a file not
trusted) is compared from its rows."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.report.golden.fixture import PAIRS
from tests.report.test_compare_columns import _rows

import aieval.report._compare as compare_module
from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.core._threshold import threshold_verdict
from aieval.report import compare_runs
from aieval.store import Store


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def _compare(store: Store, base: str, cand: str, **options: Any) -> Any:
    data = compare_runs(store, base, cand, n_resamples=200, **options).to_dict()
    return json.loads(json.dumps(data, sort_keys=True))


def _both_ways(
    store: Store, monkeypatch: pytest.MonkeyPatch, base: str, cand: str, **options: Any
) -> tuple[Any, Any]:
    """The comparison from kept columns (checked to be taken), and from the rows read back."""
    taken: list[bool] = []
    real = compare_module.kept_parts

    def spy(*args: Any, **kwargs: Any) -> Any:
        parts = real(*args, **kwargs)
        taken.append(parts is not None)
        return parts

    with monkeypatch.context() as patch:
        patch.setattr(compare_module, "kept_parts", spy)
        fast = _compare(store, base, cand, **options)
    assert taken == [True]
    return fast, _from_rows(store, monkeypatch, base, cand, **options)


def _from_rows(
    store: Store, monkeypatch: pytest.MonkeyPatch, base: str, cand: str, **options: Any
) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(compare_module, "kept_parts", lambda *a, **k: None)
        patch.setattr(compare_module, "sums_parts", lambda *a, **k: None)
        return _compare(store, base, cand, **options)


def _sample(row: dict[str, Any], index: int) -> SampleRecord:
    sample = SampleRecord(
        id=row["id"],
        index=index,
        input=row.get("input", {"q": row["id"]}),
        expected=row.get("expected", "yes"),
        scores={
            name: ScoreRecord(value, metadata=row.get("metadata", {}).get(name, {}))
            for name, value in row.get("scores", {}).items()
        },
        error=row.get("error"),
        latency_s=row.get("latency"),
        cost=row.get("cost"),
        input_tokens=row.get("input_tokens"),
        calls=row.get("calls", []),
        extra=row.get("extra", {}),
    )
    sample.verdict = threshold_verdict(sample, 0.5, weights=row.get("weights"))
    sample.passed = sample.verdict.passed
    return sample


def _write(store: Store, run_id: str, rows: list[dict[str, Any]], *, seed: int, batch: int) -> None:
    """A run whose batches arrive in no particular order, as a concurrent run's do."""
    store.create_run(name=run_id, config={}, run_id=run_id)
    samples = [_sample(row, i) for i, row in enumerate(rows)]
    random.Random(seed).shuffle(samples)
    for start in range(0, len(samples), batch):
        store.record_samples(run_id, samples[start : start + batch])
    store.finish_run(run_id, status="completed", metrics={"samples": len(samples)})


def _odd_rows(n: int, shift: float) -> list[dict[str, Any]]:
    rows = _rows(n, shift)
    judged = {"judge": {"parse_failures": 1, "votes": 3}}
    for i, row in enumerate(rows):
        if i % 9 == 0:
            row["scores"]["judge"] = (i % 4) / 3
            row["metadata"] = judged
        if i % 11 == 0:
            row["scores"]["f1"] = None  # not applicable
        if i % 13 == 0:
            row["cost"] = None
            row["input_tokens"] = 10 if i % 2 else None
            row["calls"] = [CallRecord("target", "p", "m", error=None if i % 3 else "boom")]
        if i % 17 == 0:
            row["latency"] = None
    return rows


@pytest.mark.parametrize("interval_method", ["auto", "bootstrap"])
def test_runs_written_out_of_order_compare_from_kept_columns_alike(
    store: Store, monkeypatch: pytest.MonkeyPatch, interval_method: str
) -> None:
    base = _odd_rows(120, 0.0)
    cand = _odd_rows(120, 0.1)
    cand[3]["error"] = "TimeoutError"
    cand[4]["input"] = {"q": "another"}
    cand[5]["expected"] = "no"
    cand[6]["input"] = {"q": "ex6"}  # the same value: not a change
    cand[7]["scores"]["row:contains-a"] = 1.0  # a row's own check on one side only
    cand[8]["scores"]["added"] = 0.5  # a scorer only the candidate has
    cand[9]["extra"] = {"note": "x"}
    _write(store, "base", base, seed=1, batch=7)
    _write(store, "cand", cand, seed=2, batch=13)
    for max_examples in (4, None):
        fast, slow = _both_ways(
            store, monkeypatch, "base", "cand", max_examples=max_examples,
            interval_method=interval_method, bootstrap_max_n=30,
        )  # fmt: skip
        assert fast == slow
    rules = {r["rule"]: r for r in fast["decision"]["rules"]}
    assert rules["comparable_runs"]["details"]["changed_input_ids"] == ["ex4"]
    assert fast["regressions_count"] and fast["improvements_count"]
    assert any("adds scorers" in w for w in fast["warnings"])


def test_runs_of_other_examples_pair_by_id_alike(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(store, "base", _odd_rows(60, 0.0), seed=3, batch=10)
    _write(
        store,
        "cand",
        [*_odd_rows(70, 0.2)[5:], {"id": "new", "scores": {"f1": 1.0}}],
        seed=4,
        batch=9,
    )
    fast, slow = _both_ways(store, monkeypatch, "base", "cand", max_examples=5)
    assert fast == slow
    assert fast["only_baseline_count"] == 5 and fast["only_candidate_count"] == 11


def test_the_golden_plain_runs_compare_from_kept_columns_alike(
    golden_copy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judges, target errors, unscored samples, changed inputs and answer keys, unpaired
    examples, scorer weights; the golden store's runs are written by the writer."""
    base, cand = PAIRS["ungraded"]
    with Store(golden_copy) as golden:
        for max_examples in (3, None):
            fast, slow = _both_ways(golden, monkeypatch, base, cand, max_examples=max_examples)
            assert fast == slow
        assert fast["only_baseline_count"] and fast["only_candidate_count"]


def test_a_sample_written_around_the_writer_is_never_read_stale(
    store: Store, monkeypatch: pytest.MonkeyPatch, store_location: str
) -> None:
    _write(store, "base", _rows(40), seed=5, batch=8)
    _write(store, "cand", _rows(40, 0.2), seed=6, batch=8)
    assert store.kept_columns("cand") is not None
    copy = "INSERT INTO samples (run_id, sample_id, idx, input, expected, verdict_passed," \
        " verdict_plain, weighted_score, created_at) VALUES ('cand', 'late', 40, '1', '1', 0, 1," \
        " 0.0, 0)"  # fmt: skip
    if store_location.startswith("postgresql:"):
        store._db.execute(copy)
    else:
        with sqlite3.connect(store_location) as db:
            db.execute(copy)
    assert store.kept_columns("cand") is None
    fast = _compare(store, "base", "cand")
    assert fast == _from_rows(store, monkeypatch, "base", "cand")
    assert fast["only_candidate"] == ["late"]


def test_samples_removed_around_the_writer_and_written_again_are_stored_and_read_true(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Samples deleted by hand (as if their batch were lost) and written again by a resume:
    the batch's kept row is replaced, never a write refused, never a stale figure read."""
    _write(store, "base", _rows(24), seed=5, batch=1)
    _write(store, "cand", _rows(24, 0.2), seed=6, batch=1)
    again = [_sample(row, i) for i, row in enumerate(_rows(24, 0.5))][-3:]
    for sample in again:
        store._db.execute(
            "DELETE FROM scores WHERE run_id = 'cand' AND sample_id = ?", (sample.id,)
        )
        store._db.execute(
            "DELETE FROM samples WHERE run_id = 'cand' AND sample_id = ?", (sample.id,)
        )
    for sample in again:  # one a batch: the same batches' keys as before, now other values
        store.record_samples("cand", [sample])
    assert store.kept_columns("cand") is not None
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    # written again in one batch instead: the rows no longer add up, and the run's rows are read
    for sample in again:
        store._db.execute(
            "DELETE FROM scores WHERE run_id = 'cand' AND sample_id = ?", (sample.id,)
        )
        store._db.execute(
            "DELETE FROM samples WHERE run_id = 'cand' AND sample_id = ?", (sample.id,)
        )
    store.record_samples("cand", again)
    assert store.kept_columns("cand") is None
    assert _compare(store, "base", "cand") == _from_rows(store, monkeypatch, "base", "cand")


def test_a_batch_the_columns_cannot_hold_leaves_its_run_to_the_rows(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows(20)
    rows[7]["extra"] = {"Epoch": 2}  # read as an epoch by the column reads
    _write(store, "base", rows, seed=7, batch=5)
    _write(store, "cand", _rows(20, 0.2), seed=8, batch=5)
    assert store.kept_columns("base") is None
    assert store.kept_columns("cand") is not None
    fast = _compare(store, "base", "cand")
    assert fast == _from_rows(store, monkeypatch, "base", "cand")


def test_damaged_or_untrusted_kept_columns_are_not_read(tmp_path: Path) -> None:
    location = str(tmp_path / "runs.db")
    with Store(location) as store:
        _write(store, "base", _rows(30), seed=9, batch=10)
        _write(store, "cand", _rows(30, 0.2), seed=10, batch=10)
        assert store.kept_columns("base") is not None
        expected = _compare(store, "base", "cand")
    with Store(location, untrusted=True) as untrusted:
        assert untrusted.kept_columns("base") is None
        assert _compare(untrusted, "base", "cand") == expected
    with sqlite3.connect(location) as db:
        db.execute("UPDATE run_columns SET body = substr(body, 2) WHERE run_id = 'base'")
        db.execute(
            "UPDATE run_columns SET head = replace(head, '\"rows\": ', '\"rows\": 9')"
            " WHERE run_id = 'cand'"
        )
    with Store(location) as store:
        assert store.kept_columns("base") is None
        assert store.kept_columns("cand") is None
        assert _compare(store, "base", "cand") == expected


def test_values_at_the_edges_compare_alike(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A score that is not finite, a position near 2**63, ids beyond ASCII."""
    for run_id, shift in (("base", 0.0), ("cand", 0.3)):
        rows = _rows(12, shift)
        rows[2]["scores"]["f1"] = float("inf")
        rows[3]["id"] = "exé\u2603"
        rows[4]["input"] = {"q": "\u00e9t\u00e9"}
        store.create_run(name=run_id, config={}, run_id=run_id)
        samples = [_sample(row, i if i != 11 else 2**63 - 1) for i, row in enumerate(rows)]
        store.record_samples(run_id, samples)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow


def test_a_run_stored_without_kept_columns_keeps_them_by_a_scan(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(store, "base", _odd_rows(50, 0.0), seed=11, batch=6)
    _write(store, "cand", _odd_rows(50, 0.2), seed=12, batch=6)
    written = store.kept_columns("base")
    store._write("DELETE FROM run_columns WHERE run_id = ?", ("base",))
    assert store.kept_columns("base") is None
    assert store.keep_columns("base")
    scanned = store.kept_columns("base")
    assert written is not None and scanned is not None
    for name in ("idx", "texts_hash", "passed", "weighted",
                 "latency", "cost", "unpriced", "present", "values", "rank"):  # fmt: skip
        assert np.array_equal(getattr(written, name), getattr(scanned, name), equal_nan=True)
    assert (written.names, written.errors, written.judged) == (
        scanned.names, scanned.errors, scanned.judged,
    )  # fmt: skip
    assert list(written.ids) == list(scanned.ids)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand", max_examples=5)
    assert fast == slow


def test_a_run_of_epochs_keeps_no_columns_by_a_scan(store: Store) -> None:
    rows = _rows(10)
    rows[2]["extra"] = {"epoch": 1}
    _write(store, "base", rows, seed=13, batch=10)
    assert store.kept_columns("base") is None
    assert not store.keep_columns("base")
    assert store.kept_columns("base") is None


def test_an_imported_run_keeps_no_columns(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _write(store, "base", _rows(20), seed=14, batch=5)
    _write(store, "cand", _rows(20, 0.2), seed=15, batch=5)
    with Store(str(tmp_path / "copy.db")) as other:
        for run_id in ("base", "cand"):
            other.import_run(store.get_run(run_id), store.stored_samples(run_id))
            assert other.kept_columns(run_id) is None
        assert _compare(other, "base", "cand") == _from_rows(store, monkeypatch, "base", "cand")
