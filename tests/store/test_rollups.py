"""A run's rollups (``run_totals``, ``run_rollups``, ``run_order_stats``, ``run_slices``) are
built when it ends and equal a fresh scan of its samples after every path that writes them, on
both backends; a running run is scanned and keeps none; a run without them is scanned and
healed once it is not running."""

from __future__ import annotations

import math
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.core import Reason, Verdict
from aieval.errors import UnstorableSampleError
from aieval.store import Store, _rollups
from aieval.store._rollups import RollupReader, reasons_key


def _sample(i: int, *, big: bool = False) -> SampleRecord:
    """A varied sample: values on [0, 1] and off, errors, n/a, judge metadata, no latency."""
    scores = {
        "exact": ScoreRecord(value=float(i % 2)),
        "f1": ScoreRecord(value=(i * 37 % 101) / 100.0 if i % 5 else None,
                          error="boom" if i % 10 == 0 else None),
        "judge": ScoreRecord(value=(i % 7) / 3.0 + (i % 2) * 1e-5,  # two values a bucket
                             metadata={"parse_failures": i % 3, "votes": 1} if i % 4 else None),
    }  # fmt: skip
    passed = i % 3 != 0
    calls = [
        CallRecord(
            "target",
            input_tokens=i,
            output_tokens=None if i % 9 == 0 else 3,
            cached=i % 4 == 1,
            error="refused" if i % 13 == 0 else None,
        ),
        CallRecord("judge:judge", input_tokens=5, output_tokens=2, retries=1),
    ][: i % 3]  # none, the target's, or both (a sample without a target call: its own usage)
    return SampleRecord(
        id=f"s{i:04d}",
        index=i,
        input={"q": i},
        expected="a",
        prediction="a" if passed else "b",
        scores=scores,
        passed=passed,
        latency_s=None if i % 6 == 0 else 0.01 * (i % 50),
        cost=None if i % 4 == 0 else 0.001 * i,
        error="timeout" if i % 11 == 0 else None,
        input_tokens=2**70 if big else (None if i % 5 == 1 else 10),
        output_tokens=None if i % 7 == 0 else 4,
        retries=i % 2,
        cached=i % 5 == 0,
        calls=calls,
        metadata={"topic": f"t{i % 3}"},
        verdict=Verdict(
            passed=passed,
            weighted_score=(100.0 if passed else 0.0) if i % 8 else 42.5,
            # a few distinct lists of reasons, and one per sample for some (a number in it)
            reasons=()
            if passed
            else (Reason("threshold", "f1", f"below {i % 4 if i % 5 else i}"),) * (1 + i % 2),
        ),
    )


def _postgres(store: Store) -> bool:
    return store.location.backend == "postgres"


def _kept(store: Store, run_id: str) -> tuple[Any, list[tuple[Any, ...]]]:
    totals = store.run_totals(run_id)
    rows = store._read(
        "SELECT part, g, c, qb, hb, n, total, squares, low, high, other FROM run_rollups"
        " WHERE run_id = ? ORDER BY part, g, c, qb, hb",
        (run_id,),
    )
    return totals, rows


def _assert_equal_to_scan(store: Store, run_id: str) -> None:
    """The run's rollups as kept equal those a rebuild by scan stores."""
    totals, rows = _kept(store, run_id)
    assert totals is not None, "the run's rollups are not valid"
    kept_failed = store.failed_verdicts(run_id)
    scanned_failed = store._failed_groups(run_id, reasons_key(_postgres(store)), whole=False)
    assert [(f.text, f.count, [i for _, i in f.first]) for f in kept_failed] == [
        (f.text, f.count, [i for _, i in f.first]) for f in scanned_failed
    ]
    store.rebuild_rollups(run_id)
    fresh_totals, fresh_rows = _kept(store, run_id)
    for name in totals.__dataclass_fields__:
        a, b = getattr(totals, name), getattr(fresh_totals, name)
        if isinstance(a, float) and isinstance(b, float):
            assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), name
        else:
            assert a == b, name
    assert [r[:6] for r in rows] == [r[:6] for r in fresh_rows]
    assert totals.call_totals() == store.call_totals(run_id)  # as the scan sums them
    for row, fresh in zip(rows, fresh_rows, strict=True):
        for a, b in zip(row[6:8], fresh[6:8], strict=True):
            assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), (row, fresh)
        assert row[8:] == fresh[8:]


def test_rollups_are_built_when_a_run_ends_not_by_its_batches(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        samples = [_sample(i) for i in range(120)]
        for start in range(0, 120, 25):  # uneven batches, one of a single sample
            store.record_samples(run_id, samples[start : start + 25])
        store.record_sample(run_id, _sample(500))
        # the writer pays nothing for them: a running run has none, and a report of it scans
        # without keeping any (its next batch would make them stale)
        assert store.run_totals(run_id) is None
        live = store.run_sums(run_id, ("topic",))
        assert live is not None and live.samples == 121
        assert store.run_totals(run_id) is None
        assert _rows(store, "run_order_stats", run_id) == 0
        store.finish_run(run_id, status="completed")
        totals = store.run_totals(run_id)
        assert totals is not None and totals.samples == 121 and totals.judged > 0
        assert _rows(store, "run_order_stats", run_id) > 0  # the quantiles' ranks, kept at once
        kept = store.run_sums(run_id, ("topic",))
        assert kept is not None and _same_sums(kept, live)
        _assert_equal_to_scan(store, run_id)
        # resumed: more batches on the same run, read by scan until it ends again
        store.mark_running(run_id)
        store.record_samples(run_id, [_sample(i) for i in range(200, 260)])
        assert store.run_totals(run_id) is None
        store.finish_run(run_id, status="completed")
        totals = store.run_totals(run_id)
        assert totals is not None and totals.samples == 181
        _assert_equal_to_scan(store, run_id)


def _rows(store: Store, table: str, run_id: str) -> int:
    row = store._read_one(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?", (run_id,))
    assert row is not None
    return int(row[0])


def test_a_refused_batch_leaves_nothing_in_the_rollups(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(10)])
        with pytest.raises(UnstorableSampleError):
            store.record_samples(run_id, [_sample(20), _sample(21, big=True)])
        store.finish_run(run_id, status="failed")
        totals = store.run_totals(run_id)
        assert totals is not None and totals.samples == 10
        _assert_equal_to_scan(store, run_id)


def test_imported_and_pushed_samples_keep_the_rollups(store_location: str, tmp_path: Path) -> None:
    with Store(tmp_path / "source.db") as source:
        run_id = source.create_run(name="r")
        source.record_samples(run_id, [_sample(i) for i in range(40)])
        source.finish_run(run_id, status="interrupted")
        with Store(store_location) as target:
            target.import_run(source.get_run(run_id), source.stored_samples(run_id))
            _assert_equal_to_scan(target, run_id)
            # the run grows at the source and is pushed again: only the new samples are added
            source.mark_running(run_id)
            source.record_samples(run_id, [_sample(i) for i in range(40, 70)])
            source.finish_run(run_id, status="completed")
            target.import_run(source.get_run(run_id), source.stored_samples(run_id))
            totals = target.run_totals(run_id)
            assert totals is not None and totals.samples == 70
            _assert_equal_to_scan(target, run_id)


def test_a_run_without_rollups_is_scanned_and_healed(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(50)])
        store.finish_run(run_id, status="interrupted")
        assert store.run_totals(run_id) is None  # a stopped run ends at once: built on read
        want = store.run_sums(run_id, ("topic",))
        assert store.run_totals(run_id) is not None
        # as a run stored before schema version 10: no rollups
        store._write("DELETE FROM run_totals WHERE run_id = ?", (run_id,))
        store._write("DELETE FROM run_rollups WHERE run_id = ?", (run_id,))
        assert store.run_totals(run_id) is None
        # samples added meanwhile to a run without rollups do not bring back stale ones
        store.record_samples(run_id, [_sample(i) for i in range(50, 60)])
        assert store.run_totals(run_id) is None
        got = store.run_sums(run_id, ("topic",))
        assert got is not None and want is not None and got.samples == 60
        healed = store.run_totals(run_id)
        assert healed is not None and healed.samples == 60
        _assert_equal_to_scan(store, run_id)
        # and the run's sums from the rollups equal those of the scan, field by field (the
        # quantiles to the last digit, each found by a seek on PostgreSQL)
        kept = store.run_sums(run_id, ("topic",))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(RollupReader, "ensure_rollups", lambda self, run_id: None)
            scanned = store.run_sums(run_id, ("topic",))
        assert kept is not None and scanned is not None
        assert _same_sums(kept, scanned)
        assert [s.values.quantiles for s in kept.scorers] == [
            s.values.quantiles for s in scanned.scorers
        ]
        assert store.report_sums(run_id).samples == 60


def _same_sums(a: Any, b: Any) -> bool:
    """Equal but for float sums added in another order (within 1e-12)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    if hasattr(a, "__dataclass_fields__"):
        return all(_same_sums(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same_sums(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_sums(a[k], b[k]) for k in a)
    return bool(a == b)


def test_an_older_store_is_migrated_and_its_runs_heal(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with Store(path) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(30)])
        store.finish_run(run_id, status="completed")
    with sqlite3.connect(path) as db:  # as schema version 9 left it
        for table in ("run_rollups", "run_totals", "run_order_stats", "run_slices"):
            db.execute(f"DROP TABLE {table}")
        db.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    with Store(path) as store:
        assert store.run_totals(run_id) is None
        sums = store.run_sums(run_id)
        assert sums is not None and sums.samples == 30
        _assert_equal_to_scan(store, run_id)


def test_an_untrusted_store_is_summed_by_scan(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with Store(path) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(20)])
        store.finish_run(run_id, status="completed")
        want = store.run_sums(run_id, ("topic",))
    with sqlite3.connect(path) as db:  # forged figures in the file someone else made
        db.execute("UPDATE run_totals SET samples = 20, passed = 999")
        db.execute("UPDATE run_order_stats SET value = 7.5")
        db.execute("INSERT INTO run_slices VALUES (?, 'topic', 20, '\"x\"', NULL, 20, 20, 0, 0)",
                   (run_id,))  # fmt: skip
    with Store(path, untrusted=True) as store:
        sums = store.run_sums(run_id, ("topic",))
        assert sums is not None and sums.samples == 20
        assert want is not None and _same_sums(sums, want)
        assert store.report_sums(run_id).samples == 20


_WRITER = textwrap.dedent(
    """
    import sys
    from tests.store.test_rollups import _sample
    from aieval.store import Store
    store = Store(sys.argv[1])
    run_id = store.create_run(name="killed")
    print(run_id, flush=True)
    i = 0
    while True:
        store.record_samples(run_id, [_sample(k) for k in range(i, i + 40)])
        i += 40
        if i == 400:
            print("written", flush=True)
    """
)


@pytest.mark.slow
def test_a_writer_killed_mid_run_has_its_rollups_built_on_read(
    store_location: str,
) -> None:
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{root / 'src'}:{root}", "PATH": "/usr/bin:/bin"}
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, store_location],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env=env,
    ) as writer:
        assert writer.stdout is not None
        run_id = writer.stdout.readline().strip()
        assert writer.stdout.readline().strip() == "written"  # 10 batches committed, more going
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    with Store(store_location) as store:
        assert store.run_totals(run_id) is None  # it never ended: none were built
        sums = store.run_sums(run_id)  # its owner gone: scanned, and the scan kept
        assert sums is not None and sums.samples == store.count_samples(run_id) >= 400
        totals = store.run_totals(run_id)
        assert totals is not None and totals.samples == sums.samples
        _assert_equal_to_scan(store, run_id)


def test_a_run_the_rollups_cannot_sum_ends_and_is_scanned(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(5)])
        tiny = _sample(9)
        tiny.scores["f1"] = ScoreRecord(value=1e-200)  # its square underflows in PostgreSQL
        store.record_samples(run_id, [tiny])
        store.finish_run(run_id, status="completed")  # the rollups' failure is not the run's
        assert store.get_run(run_id).status == "completed"
        assert store.count_samples(run_id) == 6
        totals = store.run_totals(run_id)
        if store.location.backend == "postgres":
            assert totals is None  # dropped, not left stale: the next report scans
        else:
            _assert_equal_to_scan(store, run_id)


def test_a_sample_written_around_the_writer_is_never_read_stale(store_location: str) -> None:
    """A sample inserted by hand (or by another program on a shared store) does not pass
    through the rollups: the count tells, and the run is summed again."""
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(30)])
        store.finish_run(run_id, status="completed")
        before = store.run_sums(run_id, ("topic",))
        assert before is not None and before.samples == 30
        store._write(
            "INSERT INTO samples (run_id, sample_id, idx, input, passed, created_at, verdict,"
            " verdict_passed, verdict_plain, verdict_values) SELECT run_id, 'by-hand', 999,"
            " input, 0, created_at, verdict, 0, 1, 0 FROM samples WHERE run_id = ? AND idx = 0",
            (run_id,),
        )
        after = store.run_sums(run_id, ("topic",))  # the kept slice is not read either
        assert after is not None and after.samples == 31
        assert after.passed == before.passed
        assert sum(g.samples for g in after.slices["topic"]) == 31
        _assert_equal_to_scan(store, run_id)


def test_a_report_reads_the_kept_order_statistics_and_slice(
    store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quantiles' order statistics (kept when the run ends) and a slice (kept by the first
    report sliced by it) are read back, not found again by a scan of the run's values."""
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(120)])
        store.finish_run(run_id, status="completed")
        first = store.run_sums(run_id, ("topic",))
        assert first is not None and _rows(store, "run_slices", run_id) > 0
        with monkeypatch.context() as patch:
            from aieval.store import _column_sums, _run_sums

            def no_scan(*args: Any, **kwargs: Any) -> Any:
                raise AssertionError("scanned again")

            patch.setattr(_run_sums.SumsReader, "_slice_rows", no_scan)
            found = _column_sums._order_statistics
            # every order statistic from the kept ones: a query for one would fail
            patch.setattr(_column_sums, "_order_statistics", lambda *a: found(no_scan, *a[1:]))
            again = store.run_sums(run_id, ("topic",))
        assert again is not None and _same_sums(again, first)
        # kept by their count of values: a score added by hand changes it, and they are found
        # again (the sample count's guard rebuilds the rest)
        judge = {s.name: s for s in first.scorers}["judge"]
        store._write(
            "UPDATE run_order_stats SET value = -1 WHERE run_id = ? AND g = 'judge'", (run_id,)
        )
        store._write("UPDATE run_order_stats SET n = n + 1 WHERE run_id = ?", (run_id,))
        fresh = store.run_sums(run_id, ("topic",))
        assert fresh is not None
        assert {s.name: s for s in fresh.scorers}["judge"].values.quantiles == (
            judge.values.quantiles
        )


def test_the_end_s_scan_holds_no_writer_off_and_a_sample_written_meanwhile_is_counted(
    tmp_path: Path,
) -> None:
    """SQLite: the run's end reads its scan in a snapshot, so another writer of the file is
    not held off by it; a sample that writer adds to the run meanwhile makes that scan unkept
    (summed again), never stored short of it."""
    path = tmp_path / "runs.db"
    with Store(path) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(30)])
        query = store._db.query
        wrote: list[bool] = []

        def query_then_write(sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
            rows = query(sql, args)
            if " AS qb, " in sql and not wrote:  # mid-scan: another writer
                other = sqlite3.connect(path, timeout=0.05)
                try:
                    with other:
                        other.execute(
                            "INSERT INTO samples (run_id, sample_id, idx, input, passed,"
                            " created_at, verdict, verdict_passed, verdict_plain,"
                            " verdict_values) SELECT run_id, 'meanwhile', 999, input, 0,"
                            " created_at, verdict, 0, 1, 0 FROM samples WHERE run_id = ?"
                            " AND idx = 0",
                            (run_id,),
                        )
                    wrote.append(True)
                except sqlite3.OperationalError:  # "database is locked"
                    wrote.append(False)
                finally:
                    other.close()
            return rows

        store._db.query = query_then_write  # type: ignore[method-assign]
        try:
            store.finish_run(run_id, status="completed")
        finally:
            store._db.query = query  # type: ignore[method-assign]
        assert wrote == [True]
        # the first scan missed a sample and was not kept; the ones kept count it
        totals = store.run_totals(run_id)
        assert totals is not None and totals.samples == 31
        _assert_equal_to_scan(store, run_id)


def _failing(i: int, reasons: tuple[Reason, ...], index: int | None = None) -> SampleRecord:
    return SampleRecord(
        id=f"f{i:05d}",
        index=i if index is None else index,
        input=i,
        expected="a",
        prediction="b",
        scores={"f1": ScoreRecord(value=0.25)},
        passed=False,
        verdict=Verdict(passed=False, reasons=reasons, weighted_score=25.0),
    )


def _firsts(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    return sorted(
        store._read(
            "SELECT reasons, idx, sample_id FROM run_reason_firsts WHERE run_id = ?", (run_id,)
        )
    )


def test_the_end_s_scan_reads_each_failed_sample_s_reasons_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first samples of each failed reasons are read from the first failed samples only,
    not from all of them again: one reading of a verdict's reasons per failed sample, and a
    few (on every connection the scan reads with)."""
    monkeypatch.setattr(_rollups, "BESIDE_FROM", 0)  # small runs read beside too
    reasons = [(Reason("threshold", "f1", f"below {k}"),) for k in range(3)]
    with Store(tmp_path / "runs.db") as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_failing(i, reasons[i % 3]) for i in range(600)])
        calls: list[int] = []
        plain = sqlite3.connect(":memory:", check_same_thread=False)  # read beside too

        def json_extract(text: str, path: str) -> Any:
            calls.append(threading.current_thread().name.startswith("aieval-rollups"))
            return plain.execute("SELECT json_extract(?, ?)", (text, path)).fetchone()[0]

        store._db._db.create_function("json_extract", 2, json_extract)  # type: ignore[attr-defined]
        opened = _rollups.open_backend

        beside: list[Any] = []

        def counting(location: Any) -> Any:
            db = opened(location)
            db._db.create_function("json_extract", 2, json_extract)
            beside.append(db)
            return db

        monkeypatch.setattr(_rollups, "open_backend", counting)
        store.finish_run(run_id, status="completed")
        plain.close()
        assert len(beside) == 2 and sum(calls) >= 600  # the reasons counted beside
        assert 600 <= len(calls) < 800  # it read every failed sample's twice before
        assert [(f.count, [i for _, i in f.first]) for f in store.failed_verdicts(run_id)] == [
            (200, [f"f{i:05d}" for i in range(k, 15, 3)]) for k in range(3)
        ]


def test_the_first_samples_of_a_reasons_found_late_in_the_run_are_kept(tmp_path: Path) -> None:
    """A reasons first failed far into the run (and samples sharing an index) is found by
    reading further: the kept first samples are those of the window over all failed ones."""
    common = (Reason("threshold", "f1", "below"),)
    late = (Reason("threshold", "f1", "late"),)
    samples = [_failing(i, common) for i in range(700)]
    samples += [_failing(5000 + i, late) for i in range(3)]
    samples.append(_failing(6000, common, index=2))
    with Store(tmp_path / "runs.db") as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, samples)
        store.finish_run(run_id, status="completed")
        window = sorted(
            store._read(
                "SELECT r, idx, sample_id FROM (SELECT r, idx, sample_id, ROW_NUMBER() OVER"
                " (PARTITION BY r ORDER BY idx, sample_id) AS k FROM (SELECT"
                f" {reasons_key(False)} AS r, idx, sample_id FROM samples WHERE run_id = ?"
                " AND verdict_passed = 0 AND verdict IS NOT NULL) f) t WHERE k <= 5",
                (run_id,),
            )
        )
        assert _firsts(store, run_id) == window
        assert len(window) == 8 and ("f06000" in {w[2] for w in window})


def test_the_scores_part_read_beside_equals_the_one_read_in_the_scan_s_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite reads the scores' part and the reasons of the end's scan on connections of their
    own meanwhile: the same rows to the last bit as in the scan's own snapshot, which it falls
    back to when such a connection cannot open or its snapshot holds another count of the
    run's samples."""
    monkeypatch.setattr(_rollups, "BESIDE_FROM", 0)  # small runs read beside too
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(300)])
        store.finish_run(run_id, status="completed")
        beside = _kept(store, run_id)

        def refused(location: Any) -> Any:
            raise sqlite3.OperationalError("unable to open database file")

        monkeypatch.setattr(_rollups, "open_backend", refused)
        store.rebuild_rollups(run_id)
        assert _kept(store, run_id) == beside  # bit for bit
        monkeypatch.undo()
        statement = (
            _rollups._part_rows("scores", False, _rollups.scores_source(), _rollups.SCORE_BUCKETS),
            (run_id,) * 2,
        )
        rows = _rollups._read_beside(store.location, run_id, 300, statement)
        assert rows == store._db.query(*statement)
        assert _rollups._read_beside(store.location, run_id, 299, statement) is None


def test_the_scan_s_own_connections_open_the_store_s_file_after_a_change_of_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store opened by a relative path, then the working folder changed (a notebook's
    ``os.chdir``): the end's extra connections open the store's own file, never a file of
    that name in the new folder (made empty, or another store's: its sums read as this run's)."""
    monkeypatch.setattr(_rollups, "BESIDE_FROM", 0)  # small runs read beside too
    for folder in "abc":
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / "b")
    with Store("runs.db") as other:  # another store of the same name, with a run of that id
        run_id = other.create_run(name="r")
        other.record_samples(run_id, [_sample(i + 1) for i in range(300)])
        other.finish_run(run_id, status="completed")
    monkeypatch.chdir(tmp_path / "a")
    with Store("runs.db") as store:
        store.create_run(name="r", run_id=run_id)  # the same id and count, other samples
        store.record_samples(run_id, [_sample(i) for i in range(300)])
        monkeypatch.chdir(tmp_path / "c")
        store.finish_run(run_id, status="completed")
        assert not (tmp_path / "c" / "runs.db").exists()
        monkeypatch.chdir(tmp_path / "b")
        store.rebuild_rollups(run_id)
        scores = _rollups._part_rows(
            "scores", False, _rollups.scores_source(), _rollups.SCORE_BUCKETS
        )
        own = store._db.query(scores, (run_id,) * 2)
        kept = store._db.query(
            "SELECT run_id, part, g, c, qb, hb, n, total, squares, low, high, other"
            " FROM run_rollups WHERE run_id = ? AND part = 'scores' ORDER BY rowid",
            (run_id,),
        )
    assert kept == own


def test_a_small_run_s_end_reads_on_its_own_connection_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Any] = []
    monkeypatch.setattr(_rollups, "open_backend", lambda location: opened.append(location))
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, [_sample(i) for i in range(300)])
        store.finish_run(run_id, status="completed")
        _assert_equal_to_scan(store, run_id)
    assert opened == []  # below BESIDE_FROM samples: no connection of its own
