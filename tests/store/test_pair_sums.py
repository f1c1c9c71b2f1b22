"""Two runs paired in SQL: what one pass reads is of one state of both runs, and each run is
read through its index."""

from __future__ import annotations

from typing import Any

import pytest

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


# a team's history: runs of plain samples made in the database, analysed
_RUNS, _PER_RUN = 20, 1000
_SEED_SAMPLES = """
INSERT INTO samples (run_id, sample_id, idx, input, expected, error, passed, latency_s,
                     created_at, verdict, weighted_score, verdict_passed, verdict_plain,
                     verdict_values, promotion_score)
SELECT r.id, 's' || lpad(i::text, 6, '0'), i, '"q"', '"a"', NULL, (i %% 3 <> 0)::int,
       (i %% 17) / 10.0, 0, '{}', (i %% 5) * 25.0, (i %% 3 <> 0)::int, 1, 1, (i %% 5) * 25.0
FROM runs r CROSS JOIN generate_series(0, %(n)s - 1) AS i
"""
_SEED_SCORES = """
INSERT INTO scores (run_id, sample_id, scorer, value)
SELECT s.run_id, s.sample_id, n.scorer,
       CASE n.scorer WHEN 'em' THEN (s.idx %% 3 <> 0)::int ELSE (s.idx %% 11) / 10.0 END
FROM samples s CROSS JOIN (VALUES ('em'), ('f1')) AS n(scorer)
"""


def test_postgres_reads_each_run_of_a_comparison_through_an_index(
    pg_url: str, monkeypatch: Any
) -> None:
    """Every statement of a comparison from sums, explained on a store of 20 runs with real
    statistics, reads samples and scores through an index of the run (never a Seq Scan of
    the whole table). How the two runs are joined is the planner's: a hash join of the two
    runs' rows measured faster than a merge join of their keys (docs/benchmarks.md)."""
    import psycopg

    import aieval.report._compare_sums as compare_sums
    from aieval.report import compare_runs
    from aieval.store._postgres import PostgresBackend

    with Store(pg_url) as store:
        runs = [store.create_run(name=f"nightly-{k}") for k in range(_RUNS)]
        with psycopg.connect(store.location.connect_url(), autocommit=True) as conn:
            conn.execute(_SEED_SAMPLES, {"n": _PER_RUN})
            conn.execute(_SEED_SCORES.replace("%%", "%"))
            conn.execute("VACUUM ANALYZE")
        asked: list[tuple[str, tuple[Any, ...]]] = []
        query = PostgresBackend.query

        def recorded(self: PostgresBackend, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
            if sql.lstrip().upper().startswith(("SELECT", "WITH")):
                asked.append((sql, tuple(args)))
            return query(self, sql, args)

        monkeypatch.setattr(compare_sums, "SUMS_FROM_PAIRS", 0)
        monkeypatch.setattr(PostgresBackend, "query", recorded)
        done = compare_runs(store, runs[3], runs[7], bootstrap_max_n=10)
        monkeypatch.setattr(PostgresBackend, "query", query)
        assert {m["method"] for m in done.metrics} >= {"paired t interval"}
        assert any("UNION ALL SELECT 1" in sql for sql, _ in asked)  # the sums path was taken
        for sql, args in asked:
            plan = "\n".join(str(row[0]) for row in store._db.query("EXPLAIN " + sql, args))
            for table in ("samples", "scores"):
                assert f"Seq Scan on {table}" not in plan, f"{sql}\n{args}\n{plan}"


def test_a_candidate_score_the_baseline_lacks_a_row_of_is_compared_as_before(
    store_location: str, monkeypatch: Any
) -> None:
    # f1 is first met on example 0 in the candidate only: where the record path meets it
    # cannot be told from the baseline's rows, so the pairing is left to the column path
    import json

    import aieval.report._compare as compare_module
    import aieval.report._compare_sums as compare_sums
    from aieval.report import compare_runs

    monkeypatch.setattr(compare_sums, "SUMS_FROM_PAIRS", 0)
    with Store(store_location) as store:
        a, b = store.create_run(name="a"), store.create_run(name="b")
        store.record_samples(
            a, [_sample(i, {"em": 1.0, **({"f1": 0.5} if i else {})}) for i in range(30)]
        )
        store.record_samples(b, [_sample(i, {"em": 0.0, "f1": 0.25}) for i in range(30)])
        assert store.pair_sums(a, b) is None
        both = []
        for parts in (compare_module.sums_parts, lambda *args, **kwargs: None):
            monkeypatch.setattr(compare_module, "sums_parts", parts)
            done = compare_runs(store, a, b, bootstrap_max_n=3, n_resamples=99)
            both.append(json.dumps(done.to_dict(), sort_keys=True))
        assert both[0] == both[1]


def test_latency_order_statistics_from_either_end_are_the_sorted_ones(store_location: str) -> None:
    with Store(store_location) as store:
        a, b = store.create_run(name="a"), store.create_run(name="b")
        store.record_samples(a, [_sample(i, {"em": 1.0}) for i in range(23)])
        store.record_samples(b, [_sample(i, {"em": 1.0}) for i in range(2, 20)])
        # the examples both have: a's 2..19 (a has others), all of b's
        want = sorted(0.1 * (i % 7) for i in range(2, 20))
        for run, other, paired in ((a, b, False), (b, a, True)):
            for offset in range(len(want)):
                for count in (1, 2, 3):
                    got = store.pair_latencies(
                        run, other, offset, count, total=len(want), all_paired=paired
                    )
                    assert got == pytest.approx(want[offset : offset + count], abs=1e-12)
