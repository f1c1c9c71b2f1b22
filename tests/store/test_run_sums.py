"""A run's sums in SQL, and two runs paired in SQL, equal what the record path computes from
the same stored samples, on both backends."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.report.golden.fixture import PAIRS, build_store

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import CriterionValue, GateOutcome, Verdict
from aieval.report import compare_runs
from aieval.report._bundle import _slice_key
from aieval.report._policy_inputs import example_inputs
from aieval.report._samples import numbers_of
from aieval.stats import histogram, quantiles
from aieval.store import PassTable, RunSums, Store, ValueSums
from aieval.store._column_sums import numpy_quantiles

#: float sums add in another order in SQL: equal to numpy's within this
REL = 1e-12
SLICES = ("topic", "nested.level", "absent")


@pytest.fixture(scope="module")
def golden_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("golden") / "runs.db"
    build_store(path).close()
    return path


def _close(a: float | None, b: float | None) -> None:
    assert (a is None) == (b is None), (a, b)
    if a is not None and b is not None:
        assert a == pytest.approx(b, rel=REL, abs=1e-12)


def _check_values(got: ValueSums, values: list[float], shape: bool = True) -> None:
    data = np.asarray(values, dtype=float)
    assert got.n == len(values)
    _close(got.total, float(np.sum(data)) if values else 0.0)
    _close(got.squares, float(np.sum(data * data)) if values else 0.0)
    assert got.minimum == (float(data.min()) if values else None)
    assert got.maximum == (float(data.max()) if values else None)
    if values:
        _close(got.mean, float(np.mean(data)))
    if len(values) > 1:
        assert got.variance == pytest.approx(float(np.var(data, ddof=1)), rel=1e-9, abs=1e-12)
    if shape:
        assert got.non_binary == int(np.count_nonzero((data != 0) & (data != 1)))
        assert list(got.histogram) == histogram(values, bins=10, range=(0.0, 1.0))["counts"]
        assert got.quantiles == quantiles(values)  # to the last digit


def _expected(samples: list[SampleRecord], slice_by: tuple[str, ...]) -> dict[str, Any]:
    """The record path's tallies (``report._bundle._RunTally``), one sample at a time."""
    out: dict[str, Any] = {
        "scorers": {},
        "criteria": {},
        "missing": Counter(),
        "floors": {},
        "violations": Counter(),
        "gates": {},
        "grades": Counter(),
        "slices": {f: {} for f in slice_by},
    }
    weighted, latency = [], []
    for s in samples:
        verdict = s.graded_verdict()
        ex = numbers_of(s, verdict)
        if ex.weighted_score is not None:
            weighted.append(ex.weighted_score)
        if s.latency_s is not None:
            latency.append(float(s.latency_s))
        for name, score in s.scores.items():
            col = out["scorers"].setdefault(name, [[], 0, 0])
            if score.not_applicable:
                col[2] += 1
            elif score.value is None or score.error:
                col[1] += 1
            else:
                col[0].append(float(score.value))
        if verdict.graded or verdict.gates or verdict.criteria or verdict.workflow is not None:
            if ex.grade is not None:
                out["grades"][ex.grade] += 1
            for gate, ok in ex.gates.items():
                counts = out["gates"].setdefault(gate, [0, 0])
                counts[0] += not ok
                counts[1] += 1
            for name, c in ex.criteria.items():
                out["criteria"].setdefault(name, []).append(c.normalized)
                if c.floor is not None:
                    out["floors"][name] = c.floor
                out["violations"][name] += c.floor_passed is False
            detail = verdict.workflow_detail
            for name in detail.missing_criteria if detail is not None else ():
                out["criteria"].setdefault(name, [])
                out["missing"][name] += 1
        for field in slice_by:
            group = out["slices"][field].setdefault(
                _slice_key(s.metadata, field), [0, 0, [], Counter()]
            )
            group[0] += 1
            group[1] += ex.passed
            if ex.weighted_score is not None:
                group[2].append(ex.weighted_score)
            if ex.graded and ex.grade is not None:
                group[3][ex.grade] += 1
    out["weighted"], out["latency"] = weighted, latency
    return out


def _check(sums: RunSums, samples: list[SampleRecord], slice_by: tuple[str, ...]) -> None:
    want = _expected(samples, slice_by)
    assert sums.samples == len(samples)
    assert sums.passed == sum(s.graded_verdict().passed for s in samples)
    assert sums.target_errors == sum(s.error is not None for s in samples)
    assert sums.epochs == sum(s.epoch is not None for s in samples)
    _check_values(sums.weighted, want["weighted"], shape=False)
    lat = np.asarray(want["latency"])
    assert sums.latency.n == len(lat)
    _close(sums.latency.mean, float(lat.mean()))
    p50, p95 = np.quantile(lat, [0.5, 0.95])
    assert (sums.latency.p50, sums.latency.p95) == (float(p50), float(p95))
    assert sums.latency.maximum == float(lat.max())
    assert [s.name for s in sums.scorers] == list(want["scorers"])
    for scorer in sums.scorers:
        values, errors, not_applicable = want["scorers"][scorer.name]
        assert (scorer.errors, scorer.not_applicable) == (errors, not_applicable)
        _check_values(scorer.values, values)
    assert [c.name for c in sums.criteria] == list(want["criteria"])
    for criterion in sums.criteria:
        _check_values(criterion.values, want["criteria"][criterion.name])
        assert criterion.errors == want["missing"][criterion.name]
        assert criterion.floor == want["floors"].get(criterion.name)
        assert criterion.floor_violations == want["violations"][criterion.name]
    assert [(g.name, g.failures, g.n) for g in sums.gates] == [
        (name, *counts) for name, counts in want["gates"].items()
    ]
    assert sums.grades == dict(want["grades"])
    assert list(sums.slices) == list(slice_by)
    for field in slice_by:
        groups = want["slices"][field]
        assert [g.key for g in sums.slices[field]] == sorted(groups)
        for g in sums.slices[field]:
            samples_n, passed, ws, grades = groups[g.key]
            assert (g.samples, g.passed, g.weighted_n, g.grades) == (
                samples_n,
                passed,
                len(ws),
                dict(grades),
            )
            _close(g.weighted_total, float(np.sum(ws)) if ws else 0.0)


@pytest.mark.parametrize("run_id", [run for pair in PAIRS.values() for run in pair])
def test_sums_equal_the_record_path_on_sqlite(golden_sqlite: Path, run_id: str) -> None:
    with Store(golden_sqlite) as store:
        sums = store.run_sums(run_id, SLICES)
        samples = list(store.iter_samples(run_id, texts=False))
    assert sums is not None
    if run_id.startswith("graded"):
        assert sums.graded == len(samples) and sums.gates and sums.criteria and sums.grades
    _check(sums, samples, SLICES)


def test_sums_equal_the_record_path_on_postgres(pg_url: str) -> None:
    with build_store(pg_url) as store:
        for run_id in ("ungraded-base", "graded-cand", "epochs-base"):
            sums = store.run_sums(run_id, SLICES)
            assert sums is not None
            _check(sums, list(store.iter_samples(run_id, texts=False)), SLICES)


def _graded(i: int) -> SampleRecord:
    """A sample whose verdict has every graded part, some of them odd (a gate named twice, a
    criterion listed missing twice, values on the bin edges)."""
    edge = [0.0, 0.1, 0.30000000000000004, 0.3, 0.7, 1.0, 0.65, 1.5][i % 8]
    return SampleRecord(
        id=f"g{i:03d}",
        index=i,
        input="q",
        prediction="a",
        metadata={"k": [True, 1, 1.0, "1", None, {"x": 1}, 1e2][i % 7]},
        scores={
            "s": ScoreRecord(edge if i % 5 else None, error="boom" if i % 10 == 0 else None),
            "t": ScoreRecord(float(i % 2)),
        },
        latency_s=float(i % 11) / 3,
        verdict=Verdict(
            passed=i % 3 == 0,
            weighted_score=None if i % 9 == 0 else 100.0 * edge,
            grade="ABCDF"[i % 5] if i % 4 else None,
            gates=(
                GateOutcome("safe", i % 6 != 0),
                GateOutcome("schema", True),
                GateOutcome("safe", i % 7 != 0),
            ),
            criteria={
                "accuracy": CriterionValue(
                    edge, adjusted=edge / 2, floor=0.5, floor_passed=edge >= 0.5
                ),
                "tone": CriterionValue(1.0 - edge / 2),
            },
            workflow={
                "missing_criteria": [{"name": "recall"}, {"name": "recall"}] if i % 4 == 1 else []
            },
        ),
    )


def test_graded_parts_and_odd_values_on_both_backends(store_location: str) -> None:
    samples = [_graded(i) for i in range(60)]
    with Store(store_location) as store:
        run_id = store.create_run(name="g")
        store.record_samples(run_id, samples[30:])  # stored out of dataset order
        store.record_samples(run_id, samples[:30])
        sums = store.run_sums(run_id, ("k", "k.x"))
        read = list(store.iter_samples(run_id, texts=False))
    assert sums is not None
    _check(sums, read, ("k", "k.x"))
    assert [c.name for c in sums.criteria] == ["accuracy", "tone", "recall"]
    assert {g.key for g in sums.slices["k"]} >= {"True", "1", "1.0", "100.0", "(missing)"}


def test_a_run_with_a_sample_stored_before_version_8_keeps_the_record_path(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    with Store(path) as store:
        run_id = store.create_run(name="old")
        store.record_samples(run_id, [_graded(i) for i in range(4)])
        assert store.sums_ready(run_id)
    # what a row written by an earlier aieval looks like once its store is migrated
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET verdict_values = NULL WHERE sample_id = 'g002'")
        db.execute("DELETE FROM run_totals")  # stored before version 10 too: no rollups
    with Store(path) as store:
        assert not store.sums_ready(run_id)
        assert store.run_sums(run_id) is None


def test_import_run_fills_the_columns(tmp_path: Path, store_location: str) -> None:
    samples = [_graded(i) for i in range(40)]
    with Store(tmp_path / "source.db") as source:
        run_id = source.create_run(name="g")
        source.record_samples(run_id, samples)
        source.finish_run(run_id, status="completed")
        want = source.run_sums(run_id, ("k",))
        with Store(store_location) as target:
            target.import_run(source.get_run(run_id), source.stored_samples(run_id))
            got = target.run_sums(run_id, ("k",))
            read = list(target.iter_samples(run_id, texts=False))
    assert got is not None and want is not None
    _check(got, read, ("k",))
    # the same as the source's own sums (floats within the tolerance: another backend adds)
    assert got.gates == want.gates and got.grades == want.grades
    assert [(c.name, c.errors, c.floor_violations, c.values.histogram) for c in got.criteria] == [
        (c.name, c.errors, c.floor_violations, c.values.histogram) for c in want.criteria
    ]


def test_unreadable_metadata_leaves_the_slices_to_the_record_path(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with Store(path) as store:
        run_id = store.create_run(name="m")
        store.record_samples(run_id, [_graded(i) for i in range(4)])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET metadata = '{\"k\": NaN' WHERE sample_id = 'g001'")
    with Store(path) as store:
        assert store.run_sums(run_id) is not None
        assert store.run_sums(run_id, ("k",)) is None


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 11, 999, 1000, 1001])
def test_quantiles_from_two_order_statistics_are_numpys(n: int) -> None:
    values = np.sort(np.random.default_rng(n).random(n))
    points = (("a", 0.0), ("b", 0.1), ("c", 0.25), ("d", 0.5), ("e", 0.9), ("f", 0.95), ("g", 1))
    got = numpy_quantiles(values.tolist(), points)
    want = np.quantile(values, [q for _, q in points])
    assert list(got.values()) == [float(v) for v in want]


def test_the_promotion_score_column_is_the_report_s(store_location: str) -> None:
    samples = [_graded(i) for i in range(12)]
    with Store(store_location) as store:
        run_id = store.create_run(name="p")
        store.record_samples(run_id, samples)
        rows = dict(
            store._read(
                "SELECT sample_id, promotion_score FROM samples WHERE run_id = ?", (run_id,)
            )
        )
    for s in samples:
        assert rows[s.id] == numbers_of(s, s.graded_verdict()).promotion_score


def _paired_inputs(store: Store, base: str, cand: str) -> tuple[Any, ...]:
    """The record path's pairs (``report._compare``): each run's examples by id, the baseline's
    dataset order, and the policy's inputs built from them."""
    b = {s.id: numbers_of(s, s.graded_verdict()) for s in store.iter_samples(base, texts=False)}
    c = {s.id: numbers_of(s, s.graded_verdict()) for s in store.iter_samples(cand, texts=False)}
    paired = [k for k in b if k in c]
    only_b = [b[k] for k in b if k not in c]
    inputs = example_inputs([b[k] for k in paired], [c[k] for k in paired], baseline_only=only_b)
    return b, c, paired, only_b, inputs


def _check_pairs(store: Store, base: str, cand: str) -> None:
    got = store.pair_sums(base, cand, example_delta=5.0, limit=7)
    assert got is not None
    b, c, paired, only_b, inputs = _paired_inputs(store, base, cand)
    assert (got.paired, got.only_baseline, got.only_candidate) == (
        len(paired),
        len(only_b),
        len(c) - len(paired),
    )
    flags = [(b[k].passed, c[k].passed) for k in paired]
    assert got.passes == PassTable(
        flags.count((True, True)),
        flags.count((True, False)),
        flags.count((False, True)),
        flags.count((False, False)),
    )
    k = got.baseline_scored
    assert k + got.baseline_only[0] == len(inputs.baseline_scores)
    assert got.unscored == len(inputs.coverage.unscored)
    assert got.candidate_scored == inputs.coverage.candidate_scored
    assert k - got.unscored == inputs.scored_paired
    wb, wc = inputs.baseline_scores[:k], inputs.candidate_scores[:k]
    p = got.promotion
    assert p.n == k
    for have, want in (
        (p.baseline, wb.sum()),
        (p.baseline_squares, (wb * wb).sum()),
        (p.candidate, wc.sum()),
        (p.candidate_squares, (wc * wc).sum()),
        (p.delta, (wc - wb).sum()),
        (p.delta_squares, ((wc - wb) ** 2).sum()),
        (got.baseline_only[1], inputs.baseline_scores[k:].sum()),
        (got.baseline_only[2], (inputs.baseline_scores[k:] ** 2).sum()),
    ):
        _close(have, float(want))
    assert got.graded_pairs >= len(inputs.graded_pairs)
    for name, sums in got.scorers.items():
        pairs = [
            (b[e].scores.get(name), c[e].scores.get(name))
            for e in paired
            if b[e].scores.get(name) is not None and c[e].scores.get(name) is not None
        ]
        x = np.array(pairs, dtype=float).reshape(-1, 2)
        assert sums.n == len(pairs)
        _close(sums.delta, float((x[:, 1] - x[:, 0]).sum()))
        _close(sums.delta_squares, float(((x[:, 1] - x[:, 0]) ** 2).sum()))
    assert set(got.scorers) == {n for e in paired for n in b[e].scores if n in c[e].scores}
    compared = compare_runs(store, base, cand, max_examples=7)
    assert list(got.regressions) == [r["id"] for r in compared.regressions]
    assert list(got.improvements) == [r["id"] for r in compared.improvements]
    assert (got.regressions_count, got.improvements_count) == (
        compared.regressions_count,
        compared.improvements_count,
    )


@pytest.mark.parametrize("kind", ["ungraded", "graded"])
def test_pairs_equal_the_record_path_on_sqlite(golden_sqlite: Path, kind: str) -> None:
    base, cand = PAIRS[kind]
    with Store(golden_sqlite) as store:
        _check_pairs(store, base, cand)
        _check_pairs(store, cand, base)


def test_pairs_equal_the_record_path_on_postgres(pg_url: str) -> None:
    with build_store(pg_url) as store:
        _check_pairs(store, *PAIRS["graded"])
        _check_pairs(store, *PAIRS["ungraded"])
        assert store.pair_sums(*PAIRS["epochs"]) is None  # examples are means over epochs


def test_pairs_that_sql_cannot_pair_exactly_are_refused(tmp_path: Path) -> None:
    def sample(i: int, scorers: tuple[str, ...]) -> SampleRecord:
        return SampleRecord(
            id=f"s{i}",
            index=i,
            input="q",
            scores={n: ScoreRecord(1.0) for n in scorers},
            verdict=Verdict(passed=True, weighted_score=100.0),
        )

    with Store(tmp_path / "runs.db") as store:
        runs = {}
        for name, scorers in (
            ("a", lambda i: ("em",)),
            ("b", lambda i: ("em", "f1")),
            ("r", lambda i: ("em", "row:x") if i % 2 else ("em",)),
            ("s", lambda i: ("em", "row:x") if i % 3 else ("em",)),
        ):
            runs[name] = store.create_run(name=name)
            store.record_samples(runs[name], [sample(i, scorers(i)) for i in range(6)])
        assert store.pair_sums(runs["b"], runs["a"]) is not None
        assert store.pair_sums(runs["a"], runs["b"]) is None  # the candidate adds a scorer
        assert store.pair_sums(runs["r"], runs["r"]) is not None  # the same rows' checks
        assert store.pair_sums(runs["r"], runs["s"]) is None  # a pair's rows' checks differ


def _statements(store: Store, n: int) -> list[tuple[str, tuple[Any, ...]]]:
    """The statements ``run_sums`` and ``pair_sums`` send for two runs of ``n`` samples."""
    a, b = store.create_run(name=f"a{n}"), store.create_run(name=f"b{n}")
    store.record_samples(a, [_graded(i) for i in range(n)])
    store.record_samples(b, [_graded(i) for i in range(n // 2, n + n // 2)])
    seen: list[tuple[str, tuple[Any, ...]]] = []
    query = store._db.query

    def recording(sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        seen.append((sql, tuple(args)))
        return query(sql, args)

    store._db.query = recording  # type: ignore[method-assign]
    try:
        assert store.run_sums(a, ("k",)) is not None
        assert store.pair_sums(a, b, limit=3) is not None
    finally:
        store._db.query = query  # type: ignore[method-assign]
    return seen


def _shapes(statements: list[tuple[str, tuple[Any, ...]]]) -> list[str]:
    """The statements, each list of parameters (the order statistics asked for) as one."""
    return [re.sub(r"\?(, \?)+", "?", sql) for sql, _ in statements]


def test_each_sum_is_one_statement_per_run_read_through_the_run_s_index(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        small = _statements(store, 8)
        large = _statements(store, 400)
        # as many statements for 400 samples as for 8: none per sample
        assert _shapes(small) == _shapes(large)
        for sql, args in large:
            assert ";" not in sql
            plan = [str(row[-1]) for row in store._db.query(f"EXPLAIN QUERY PLAN {sql}", args)]
            # every table is searched by its run's key, never scanned whole
            scans = [
                step
                for step in plan
                if step.startswith("SCAN") and step.split()[1] in ("samples", "scores")
            ]
            assert not scans, (sql, plan)
            assert all(
                "(run_id=?" in step
                for step in plan
                if step.startswith("SEARCH")
                and step.split()[1] in ("samples", "scores", "sample_values", "b", "c", "s")
            ), (sql, plan)


def test_postgres_sums_take_as_many_statements_whatever_the_size(pg_url: str) -> None:
    with Store(pg_url) as store:
        assert _shapes(_statements(store, 6)) == _shapes(_statements(store, 300))


def test_quantiles_of_values_crowded_in_a_bucket_or_far_outside_are_exact(
    store_location: str,
) -> None:
    # many distinct values in one fine bucket, ties, and values below 0 and far above 1
    values = [0.5 + i * 1e-12 for i in range(150)] + [0.25] * 40 + [-3.0, 7.5, 1e9, 0.0]
    samples = [
        SampleRecord(
            id=f"v{i:03d}",
            index=i,
            input="q",
            scores={"x": ScoreRecord(v)},
            latency_s=v * 1000 if v >= 0 else None,
            verdict=Verdict(passed=True, weighted_score=50.0),
        )
        for i, v in enumerate(values)
    ]
    with Store(store_location) as store:
        run_id = store.create_run(name="q")
        store.record_samples(run_id, samples)
        sums = store.run_sums(run_id)
        read = list(store.iter_samples(run_id, texts=False))
    assert sums is not None
    _check(sums, read, ())


def test_plain_runs_are_summed_and_paired_in_few_passes(store_location: str) -> None:
    # two plain runs of the same examples with 0/1 scores: no grade, no unpaired example and no
    # crowded bucket, so nothing beyond the fixed passes is asked
    def plain(i: int, run: int) -> SampleRecord:
        return SampleRecord(
            id=f"e{i}",
            index=i,
            input="q",
            scores={"em": ScoreRecord(float((i + run) % 2))},
            latency_s=0.5,
            metadata={"k": i % 3},
            verdict=Verdict(passed=bool((i + run) % 2), weighted_score=100.0 * ((i + run) % 2)),
        )

    with Store(store_location) as store:
        a, b = store.create_run(name="a"), store.create_run(name="b")
        store.record_samples(a, [plain(i, 0) for i in range(40)])
        store.record_samples(b, [plain(i, 1) for i in range(40)])
        for run_id in (a, b):  # ended: their rollups built
            store.finish_run(run_id, status="completed")
        store.run_sums(a, ("k",))  # the first report sliced by "k" keeps the slice
        seen: list[str] = []
        query = store._db.query

        def recording(sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
            seen.append(sql)
            return query(sql, args)

        store._db.query = recording  # type: ignore[method-assign]
        try:
            sums = store.run_sums(a, ("k",))
            run_statements = len(seen)
            pair = store.pair_sums(a, b, limit=5)
        finally:
            store._db.query = query  # type: ignore[method-assign]
    assert sums is not None and sums.samples == 40 and sums.grades == {}
    assert pair is not None and (pair.only_baseline, pair.only_candidate) == (0, 0)
    assert len(pair.regressions) == len(pair.improvements) == 5
    # the samples' totals, the kept order statistics, latency's buckets, the scores' buckets,
    # the scorers' order, the gates and criteria, the kept slice
    assert run_statements == 7, seen[:run_statements]
    # the scorers' pairs with the candidate's scorers; the pairs with both runs' sizes and
    # readiness; the listing
    assert len(seen) - run_statements == 3, seen[run_statements:]


@pytest.mark.parametrize(("scale", "cap", "histogram"), [(1024, 4.0, True), (64, 16384.0, False)])
def test_sqlite_groups_by_one_key_as_by_code_bucket_and_bin(
    scale: int, cap: float, histogram: bool
) -> None:
    """SQLite groups the rows by one integer standing for code, bucket and bin: the same
    groups, in the same order, with the same sums as grouping by the three (odd codes, no
    value, values below 0, on the bins' edges, at and beyond the cap)."""
    from aieval.store._column_sums import _bin, _bucket, grouped_sql

    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (g TEXT, c INTEGER, v REAL)")
    values = [None, -0.5, -1e-300, 0.0, 0.05, 0.1, 0.3, 0.7, 0.9999, 1.0, 1.5, cap, cap * 9, 1e300]
    db.executemany(
        "INSERT INTO t VALUES (?, ?, ?)",
        [
            (g, c, v if v is None else v * (1 + k * 1e-9))
            for k in range(3)
            for g in ("a", "b", "")
            for c in (-3, 0, 1, 2, 7)
            for v in values
        ],
    )
    source = "SELECT g, c, v FROM t"
    bins = _bin("v", False) if histogram else "CAST(NULL AS INTEGER)"
    by_three = (
        "SELECT g, c, qb, hb, COUNT(*), SUM(v), SUM(v * v), MIN(v), MAX(v),"
        " SUM(CASE WHEN v <> 0 AND v <> 1 THEN 1 ELSE 0 END) FROM (SELECT g, c, v,"
        f" {_bucket('v', False, scale, cap)} AS qb, {bins} AS hb FROM ({source}) s) t"
        " GROUP BY g, c, qb, hb"
    )
    keyed = grouped_sql(False, source, scale=scale, cap=cap, histogram=histogram)
    assert "GROUP BY g, k" in keyed
    expected = db.execute(by_three).fetchall()
    assert len(expected) > 60
    assert db.execute(keyed).fetchall() == expected
