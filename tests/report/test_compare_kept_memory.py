"""A comparison from kept columns holds about one compact copy of each run: its memory grows
by well under the 360 bytes a paired example the first version took (2 x 1M: 497 MB), so that
two runs of a million samples compare within 300 MB."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import aieval.report._compare as compare_module
from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
from aieval.report import compare_runs
from aieval.store import Store

#: bytes a paired example may add to the comparison's peak (two runs, two scorers)
_PER_PAIR = 250
#: closed-form intervals from this many pairs on, as a million pairs draw them (a bootstrap's
#: resamples would weigh more than the runs)
_CLOSED_FROM = 500


def _write(store: Store, run_id: str, n: int, skill: int) -> None:
    store.create_run(name=run_id, config={}, run_id=run_id)
    batch: list[SampleRecord] = []
    for i in range(n):
        exact = float((i * 7919 + skill) % 100 < skill)
        f1 = ((i * 2654435761 + skill) % 1000) / 1000
        score = 50.0 * (exact + f1)
        batch.append(
            SampleRecord(
                id=f"s{i}", index=i, input={"q": i}, expected="a", prediction="a",
                scores={"exact": ScoreRecord(value=exact), "f1": ScoreRecord(value=f1)},
                passed=score >= 50, latency_s=0.01 * (i % 89),
                verdict=Verdict(passed=score >= 50, weighted_score=score),
            )
        )  # fmt: skip
        if len(batch) == 1000:
            store.record_samples(run_id, batch)
            batch = []
    store.record_samples(run_id, batch)
    store.finish_run(run_id, status="completed")


def _traced_peak(store: Store, base: str, cand: str) -> int:
    """The comparison's traced peak, in bytes above what was held before it."""
    tracemalloc.start()
    try:
        compare_runs(store, base, cand, bootstrap_max_n=_CLOSED_FROM)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_of_a_comparison_from_kept_columns_grows_little_per_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[bool] = []
    real = compare_module.kept_parts

    def spy(*args: object, **kwargs: object) -> object:
        parts = real(*args, **kwargs)  # type: ignore[arg-type]
        taken.append(parts is not None)
        return parts

    monkeypatch.setattr(compare_module, "kept_parts", spy)
    monkeypatch.setattr(compare_module, "sums_parts", lambda *a, **k: None)
    small, large = 600, 4_600
    with Store(str(tmp_path / "runs.db")) as store:
        for n in (small, large):
            _write(store, f"base{n}", n, 70)
            _write(store, f"cand{n}", n, 72)
        compare_runs(store, f"base{small}", f"cand{small}", bootstrap_max_n=_CLOSED_FROM)
        peaks = {n: _traced_peak(store, f"base{n}", f"cand{n}") for n in (small, large)}
    assert taken == [True, True, True]
    per_pair = (peaks[large] - peaks[small]) / (large - small)
    assert 0 < per_pair < _PER_PAIR, f"{per_pair:.0f} bytes a pair"
