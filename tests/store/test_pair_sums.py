"""Two runs paired in SQL: what one pass reads is of one state of both runs, each join is a
walk of the primary keys, and an edge of the scorers' order is kept."""

from __future__ import annotations

from typing import Any

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
from aieval.store import Store


def _sample(i: int, scorers: dict[str, float]) -> SampleRecord:
    return SampleRecord(
        id=f"e{i}",
        index=i,
        input="q",
        scores={name: ScoreRecord(value) for name, value in scorers.items()},
        latency_s=0.1 * (i % 7),
        verdict=Verdict(passed=bool(i % 2), weighted_score=100.0 * (i % 2)),
    )


def test_the_sizes_and_pairs_are_of_one_state_while_both_runs_are_written(
    store_location: str,
) -> None:
    # another writer adds an example to both runs between any two statements: the pairs and
    # the unpaired counts must still describe one state (no example counted unpaired that is
    # paired, no negative count), as one statement reads them
    with Store(store_location) as store, Store(store_location) as writer:
        a, b = store.create_run(name="a"), store.create_run(name="b")
        for run in (a, b):
            store.record_samples(run, [_sample(i, {"em": float(i % 2)}) for i in range(12)])
        added = iter(range(100, 200))
        query = store._db.query

        def written_between(sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
            rows = query(sql, args)
            i = next(added)
            for run in (a, b):
                writer.record_samples(run, [_sample(i, {"em": 1.0})])
            return rows

        store._db.query = written_between  # type: ignore[method-assign]
        try:
            pair = store.pair_sums(a, b, limit=3)
        finally:
            store._db.query = query  # type: ignore[method-assign]
        assert pair is not None
        assert (pair.only_baseline, pair.only_candidate) == (0, 0)
        assert pair.paired > 12
        assert sum(
            (pair.passes.both, pair.passes.baseline_only, pair.passes.candidate_only,
             pair.passes.neither)
        ) == pair.paired  # fmt: skip
