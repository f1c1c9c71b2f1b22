import sqlite3
import threading
from pathlib import Path

import pytest

from aieval import CallRecord, SampleRecord, ScoreRecord, Store
from aieval.errors import RunNotFoundError


def sample(i: int, **extra: object) -> SampleRecord:
    return SampleRecord(
        id=f"s{i}",
        index=i,
        input={"q": i} if i % 2 else f"prompt {i}",
        expected=f"exp {i}",
        prediction=f"pred {i}",
        metadata={"slice": "a" if i % 2 else "b"},
        scores={
            "em": ScoreRecord(float(i % 2)),
            "judge": ScoreRecord(None, error="scorer 'judge' raised ValueError: boom"),
        },
        calls=[
            CallRecord(
                "target", "openai", "m", latency_s=0.1, input_tokens=3, output_tokens=5, retries=1
            )
        ],
        passed=bool(i % 2),
        latency_s=0.1,
        **extra,  # type: ignore[arg-type]
    )


def test_roundtrip_in_a_real_store(store_location: str) -> None:
    path = store_location
    with Store(path) as store:
        run_id = store.create_run(
            name="qa",
            model="m",
            dataset="d.jsonl",
            dataset_hash="h",
            n_examples=3,
            config={"concurrency": 4},
        )
        for i in range(3):
            store.record_sample(run_id, sample(i))
        store.finish_run(run_id, status="completed", metrics={"samples": 3})
    with Store(path) as reopened:
        row = reopened.get_run(run_id)
        assert (row.status, row.model, row.config, row.metrics) == (
            "completed",
            "m",
            {"concurrency": 4},
            {"samples": 3},
        )
        records = list(reopened.iter_samples(run_id))
        assert [r.id for r in records] == ["s0", "s1", "s2"]
        assert records[1].input == {"q": 1}
        assert records[1].scores["em"].value == 1.0
        assert records[1].scores["judge"].error.startswith("scorer 'judge' raised")
        assert records[1].calls[0].retries == 1
        assert reopened.score_values(run_id)["em"] == [0.0, 1.0, 0.0]


def test_sqlite_store_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    Store(path).close()
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_sample_is_committed_immediately(store_location: str) -> None:
    store = Store(store_location)
    run_id = store.create_run(name="qa")
    store.record_sample(run_id, sample(0))
    # a separate connection (another process in real life) sees it before the run ends
    with Store(store_location) as other:
        assert other.count_samples(run_id) == 1


def test_duplicate_sample_is_rejected_atomically(store_location: str) -> None:
    store = Store(store_location)
    run_id = store.create_run(name="qa")
    store.record_sample(run_id, sample(0))
    with pytest.raises(Exception, match="cannot write samples"):
        store.record_samples(run_id, [sample(1), sample(0)])
    assert store.completed_sample_ids(run_id) == {"s0"}


def test_lookup_by_prefix_and_name(store_location: str) -> None:
    store = Store(store_location)
    first = store.create_run(name="qa")
    second = store.create_run(name="qa")
    assert store.get_run("qa").id == second
    assert store.get_run(first[:-2]).id == first
    with pytest.raises(RunNotFoundError, match="no run with id or name 'nope'"):
        store.get_run("nope")
    store.finish_run(second, status="completed")
    unfinished = store.latest_unfinished("qa")
    assert unfinished is not None and unfinished.id == first
    assert [r.id for r in store.list_runs(name="qa")] == [second, first]


def test_concurrent_writers_from_threads(store_location: str) -> None:
    store = Store(store_location)
    run_id = store.create_run(name="qa")

    def write(offset: int) -> None:
        for i in range(offset, offset + 50):
            store.record_sample(run_id, sample(i))

    threads = [threading.Thread(target=write, args=(k * 50,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count_samples(run_id) == 200


def test_get_sample(store_location: str) -> None:
    store = Store(store_location)
    run_id = store.create_run(name="qa")
    store.record_sample(run_id, sample(4))
    assert store.get_sample(run_id, "s4").prediction == "pred 4"
    with pytest.raises(RunNotFoundError):
        store.get_sample(run_id, "zzz")


def test_baseline_lookup_excludes_the_candidate_and_prefers_completed(store_location: str) -> None:
    store = Store(store_location)
    done = store.create_run(name="qa")
    store.finish_run(done, status="completed")
    crashed = store.create_run(name="qa")
    store.finish_run(crashed, status="failed")
    candidate = store.create_run(name="qa")
    assert store.get_run("qa").id == candidate
    assert store.get_run("qa", exclude=candidate).id == done
    assert store.get_run("qa", exclude=done).id == candidate
    assert store.get_run(crashed, exclude=crashed).id == crashed  # an explicit id is kept
    lonely = store.create_run(name="solo")
    with pytest.raises(RunNotFoundError, match=f"no earlier run named 'solo' other than {lonely}"):
        store.get_run("solo", exclude=lonely)
