"""Runs never look green when they lost data or evaluated nothing; user code cannot end them."""

import asyncio
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from aieval import Score, Store, run, scorer
from aieval._records import SampleRecord
from aieval.errors import ConfigError, DatasetError, StoreError
from aieval.scorers import exact_match

SURROGATE = "bad byte \udc80 here"


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"s{i}", "prompt": f"p{i}", "expected": "x", "prediction": "x"} for i in range(n)
    ]


def test_lone_surrogates_are_stored_and_read_back(tmp_path: Path) -> None:
    @scorer
    def reasoned(prediction: str, expected: str) -> Score:
        return Score(1.0, reason=f"saw {prediction}")

    data = [
        {"id": "a\udc80", "prompt": SURROGATE, "expected": SURROGATE, "prediction": SURROGATE},
        {"id": "plain", "prompt": "é", "expected": "é", "prediction": "é"},
    ]
    db = tmp_path / "runs.db"
    result = run(name="surrogates", dataset=data, scorers=[exact_match, reasoned], store=db)
    assert result.status == "completed" and result.summary.samples == 2
    with Store(db) as store:
        first, second = store.iter_samples(result.id)
        assert first.id == "a\udc80"
        assert first.prediction == SURROGATE
        assert first.input == SURROGATE and first.expected == SURROGATE
        assert first.scores["reasoned"].reason == f"saw {SURROGATE}"
        assert store.get_sample(result.id, "a\udc80").prediction == SURROGATE
        assert second.prediction == "é"
        assert store.completed_sample_ids(result.id) == {"a\udc80", "plain"}
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_target_error_with_a_surrogate_is_stored(tmp_path: Path) -> None:
    def target(example: Any) -> str:
        raise ValueError(SURROGATE)

    result = run(
        name="t", dataset=rows(3), scorers=[exact_match], target=target, store=tmp_path / "r.db"
    )
    assert [s.error for s in result.samples] == [f"target raised ValueError: {SURROGATE}"] * 3
    assert result.top_errors == [(f"target: target raised ValueError: {SURROGATE}", 3)]


def test_exit_in_a_scorer_is_that_samples_error(tmp_path: Path) -> None:
    @scorer
    def quits(prediction: str, expected: str, *, example: Any = None) -> float:
        if example.id == "s3":
            sys.exit(3)
        return 1.0

    @scorer
    async def quits_async(prediction: str, expected: str, *, example: Any = None) -> float:
        if example.id == "s5":
            exit(4)
        return 1.0

    result = run(
        name="exit", dataset=rows(10), scorers=[quits, quits_async], store=tmp_path / "r.db"
    )
    assert result.status == "completed" and len(result.samples) == 10
    errors = {s.id: s.errors for s in result.samples if s.errors}
    assert errors == {
        "s3": {"quits": "scorer 'quits' called exit(3)"},
        "s5": {"quits_async": "scorer 'quits_async' called exit(4)"},
    }
    assert result.error_count == 2 and not result.ok


@pytest.mark.parametrize("is_async", [False, True])
def test_exit_in_a_callable_target_is_that_samples_error(tmp_path: Path, is_async: bool) -> None:
    def sync_target(example: Any) -> str:
        if example.id == "s1":
            sys.exit(2)
        return "x"

    async def async_target(example: Any) -> str:
        return sync_target(example)

    target = async_target if is_async else sync_target
    result = run(
        name="t", dataset=rows(4), scorers=[exact_match], target=target, store=tmp_path / "r.db"
    )
    assert len(result.samples) == 4
    assert {s.id: s.error for s in result.samples if s.error} == {"s1": "target called exit(2)"}


class _Boom(BaseException):
    """A user's own BaseException subclass: not an Exception, not an exit."""


def _finishes(call: Any, seconds: float = 60.0) -> Any:
    """``call()`` in a thread; fail (rather than hang the suite) when it does not return."""
    import threading

    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # reported below
            box["error"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the run hung"
    if "error" in box:
        raise box["error"]
    return box["result"]


@pytest.mark.parametrize("kind", [_Boom, GeneratorExit])
def test_a_base_exception_in_a_scorer_is_that_samples_error(tmp_path: Path, kind: type) -> None:
    @scorer
    def blows(prediction: str, expected: str, *, example: Any = None) -> float:
        if example.id == "s2":
            raise kind("base")
        return 1.0

    @scorer
    async def blows_async(prediction: str, expected: str, *, example: Any = None) -> float:
        if example.id == "s4":
            raise kind("async base")
        return 1.0

    result = _finishes(
        lambda: run(
            name="base", dataset=rows(6), scorers=[blows, blows_async], store=tmp_path / "r.db"
        )
    )
    assert result.status == "completed" and len(result.samples) == 6
    name = kind.__name__
    assert {s.id: s.errors for s in result.samples if s.errors} == {
        "s2": {"blows": f"scorer 'blows' raised {name}: base"},
        "s4": {"blows_async": f"scorer 'blows_async' raised {name}: async base"},
    }
    assert result.error_count == 2 and not result.ok


@pytest.mark.parametrize("is_async", [False, True])
def test_a_base_exception_in_a_callable_target_is_that_samples_error(
    tmp_path: Path, is_async: bool
) -> None:
    def sync_target(example: Any) -> str:
        if example.id == "s1":
            raise _Boom("gone")
        return "x"

    async def async_target(example: Any) -> str:
        return sync_target(example)

    target = async_target if is_async else sync_target
    result = _finishes(
        lambda: run(
            name="t", dataset=rows(4), scorers=[exact_match], target=target, store=tmp_path / "r.db"
        )
    )
    assert len(result.samples) == 4
    assert {s.id: s.error for s in result.samples if s.error} == {"s1": "target raised _Boom: gone"}


@pytest.mark.parametrize("is_async", [False, True])
def test_a_targets_own_timeout_is_not_the_runners_deadline(tmp_path: Path, is_async: bool) -> None:
    # s3 outlasts the runner's deadline: it waits for what only comes after the run. The
    # others return at once, and the deadline is long enough for a busy machine to start them.
    released = threading.Event()

    def sync_target(example: Any) -> str:
        if example.id == "s1":
            raise TimeoutError("read timed out after 2 s")
        if example.id == "s2":
            raise TimeoutError  # no message of its own
        if example.id == "s3":
            released.wait(600)  # the runner's own deadline
        return "x"

    async def async_target(example: Any) -> str:
        if example.id == "s3":
            await asyncio.Event().wait()  # cancelled at the deadline
        return sync_target(example)

    try:
        result = run(
            name="t",
            dataset=rows(4),
            scorers=[exact_match],
            target=async_target if is_async else sync_target,
            timeout=3.0,
            store=tmp_path / "r.db",
        )
    finally:
        released.set()
    assert {s.id: s.error for s in result.samples if s.error} == {
        "s1": "target raised TimeoutError: read timed out after 2 s",
        "s2": "target raised TimeoutError",
        "s3": "target timed out after 3.0 s",
    }


def test_empty_dataset_is_an_error_not_a_completed_run(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with pytest.raises(DatasetError, match="no rows"):
        run(name="empty", dataset=[], scorers=[exact_match], store=db)
    with pytest.raises(DatasetError, match="limit=0"):
        run(name="empty", dataset=rows(3), scorers=[exact_match], store=db, limit=0)
    assert Store(db).list_runs() == []


def test_errors_are_counted_with_their_top_messages() -> None:
    def target(example: Any) -> str:
        number = int(example.id[1:])
        if number % 4 == 0:
            raise RuntimeError("upstream down")
        if number % 4 == 1:
            raise ValueError("bad answer")
        return "x"

    result = run(name="errs", dataset=rows(20), scorers=[exact_match], target=target, store=False)
    assert result.error_count == 10
    assert result.error_rate == 0.5
    assert sorted(result.top_errors) == [
        ("target: target raised RuntimeError: upstream down", 5),
        ("target: target raised ValueError: bad answer", 5),
    ]
    assert not result.ok and result.error_budget_exceeded
    tolerant = run(
        name="errs",
        dataset=rows(20),
        scorers=[exact_match],
        target=target,
        store=False,
        max_error_rate=0.5,
    )
    assert tolerant.ok and tolerant.max_error_rate == 0.5
    assert tolerant.to_dict()["error_count"] == 10


class FailingStore(Store):
    """A real store whose disk 'fills up' after ``room`` samples."""

    room = 10**9

    def record_samples(self, run_id: str, samples: list[SampleRecord]) -> None:
        stored = self.count_samples(run_id)
        if stored + len(samples) > self.room:
            raise StoreError("cannot write samples: database or disk is full")
        super().record_samples(run_id, samples)


def test_a_failed_commit_fails_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = FailingStore(db)
    store.room = 37

    async def target(example: Any) -> str:
        return "x"

    with pytest.raises(StoreError, match="disk is full"):
        run(
            name="full",
            dataset=rows(200),
            scorers=[exact_match],
            target=target,
            store=store,
            concurrency=4,
        )
    (row,) = store.list_runs()
    assert row.status == "failed" and "disk is full" in (row.error or "")
    stored = store.count_samples(row.id)
    assert stored <= 37
    assert row.metrics is not None and row.metrics["samples"] == stored  # only what is stored
    store.room = 10**9
    resumed = run(
        name="full",
        dataset=rows(200),
        scorers=[exact_match],
        target=target,
        store=store,
        resume=True,
    )
    assert resumed.id == row.id and resumed.status == "completed"
    assert resumed.summary.samples == 200
    ids = [r[0] for r in sqlite3.connect(db).execute("SELECT sample_id FROM samples")]
    assert sorted(ids) == sorted(f"s{i}" for i in range(200))


def test_a_run_with_nothing_to_score_is_refused(tmp_path: Path) -> None:
    """No scorers and no workflow: every sample would pass with nothing checked."""
    with pytest.raises(ConfigError, match=r"^scorers: give at least one scorer"):
        run(name="empty", dataset=rows(3), scorers=[], store=tmp_path / "r.db")
    assert not (tmp_path / "r.db").exists()
