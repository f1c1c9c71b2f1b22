"""``push`` from one store to another: exact copies, idempotent, updated after a resume.

The target is each backend in turn (``store_location``: an SQLite file, then PostgreSQL).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest
from tests.push.helpers import (
    EXAMPLES,
    make_interrupted_run,
    make_run,
    record_odd_run,
    resume_run,
    rows,
    same_comparison,
    same_reports,
    same_rows,
    sample_count,
)
from tests.support.cli import Done, run_main

from aieval import Example, run
from aieval.errors import PushError, RunInProgressError, RunNotFoundError
from aieval.push import StoreTarget, push_runs
from aieval.report import build_report
from aieval.scorers import exact_match
from aieval.store import RunHolding, Store

Cli = Callable[..., Done]


@pytest.fixture
def aieval(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``aieval ARGS`` in this process: what the command prints, refuses and stores."""

    def invoke(*args: str) -> Done:
        return run_main(capsys, monkeypatch, *args)

    return invoke


def push(source: Path, target: Path | str, *refs: str) -> tuple[int, int, int, int]:
    """Push and return (new, updated, unchanged, samples copied)."""
    with Store(source) as src:
        summary = push_runs(src, StoreTarget(Store(target)), refs)
    return (
        summary.count("new"),
        summary.count("updated"),
        summary.count("unchanged"),
        summary.samples,
    )


def test_push_copies_runs_exactly_and_twice_adds_nothing(
    tmp_path: Path, store_location: str
) -> None:
    src, dst = tmp_path / "local.db", store_location
    base = make_run(src, "qa", 40, wrong_every=3)
    cand = make_run(src, "qa", 40, wrong_every=5)
    odd = record_odd_run(Store(src), "odd")
    assert push(src, dst) == (3, 0, 0, 85)
    same_rows(src, dst)
    with Store(src) as a, Store(dst) as b:
        for run_id in (base, cand, odd):
            same_reports(a, b, run_id)
            assert b.get_run(run_id) == a.get_run(run_id)
        same_comparison(a, b, base, cand)
    assert push(src, dst) == (0, 0, 3, 0)
    assert sample_count(dst) == 85
    same_rows(src, dst)


def test_texts_no_encoding_can_hold_come_back_exactly(tmp_path: Path, store_location: str) -> None:
    src, dst = tmp_path / "local.db", store_location
    with Store(src) as store:
        odd = record_odd_run(store, "odd")
    push(src, dst)
    with Store(src) as a, Store(dst) as b:
        copied = list(b.iter_samples(odd))
        assert copied == list(a.iter_samples(odd))
        assert {s.prediction for s in copied} >= {"nul\x00byte", "lone \udc80 surrogate"}
        assert b.get_run(odd).config == {"note": "c\udcff\x00"}
        assert [c.model for c in copied[1].calls] == ["m", copied[1].prediction]


def test_a_resumed_run_is_updated_not_duplicated(tmp_path: Path, store_location: str) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_interrupted_run(src, "long", 30, stop_after=12)
    assert push(src, dst) == (1, 0, 0, 12)
    with Store(dst) as team:
        assert team.get_run(run_id).status == "interrupted"
        assert team.count_samples(run_id) == 12
    resume_run(src, "long", 30)
    assert push(src, dst) == (0, 1, 0, 18)
    same_rows(src, dst)
    with Store(src) as a, Store(dst) as b:
        assert b.get_run(run_id).status == "completed"
        same_reports(a, b, run_id)
    assert push(src, dst) == (0, 0, 1, 0)


def test_a_new_status_alone_updates_the_header(tmp_path: Path, store_location: str) -> None:
    src, dst = tmp_path / "local.db", store_location
    with Store(src) as store:
        run_id = store.create_run(name="h")
        store.finish_run(run_id, status="failed", error="disk full")
    push(src, dst)
    with Store(src) as store:
        store.finish_run(run_id, status="completed", metrics={"samples": 0})
    assert push(src, dst) == (0, 1, 0, 0)
    with Store(dst) as team:
        row = team.get_run(run_id)
        assert (row.status, row.error, row.metrics) == ("completed", None, {"samples": 0})


def test_names_ids_and_prefixes_choose_runs(tmp_path: Path, store_location: str) -> None:
    src, dst = tmp_path / "local.db", store_location
    a1 = make_run(src, "a", 3)
    a2 = make_run(src, "a", 3)
    b = make_run(src, "b", 3)
    assert push(src, dst, "a") == (2, 0, 0, 6)  # a name is every run of that name
    with Store(dst) as team:
        assert {r.id for r in team.list_runs()} == {a1, a2}
    assert push(src, dst, b[:-2], a1) == (1, 0, 1, 3)  # an id prefix, an id
    with pytest.raises(RunNotFoundError, match="nope"):
        push(src, dst, "nope")


def test_a_live_run_is_left_for_later_and_refused_by_id(
    tmp_path: Path, store_location: str
) -> None:
    src, dst = tmp_path / "local.db", store_location
    done = make_run(src, "done", 2)
    with Store(src) as store:
        live = store.create_run(name="live")  # this process: alive
        summary = push_runs(store, StoreTarget(Store(dst)))
        assert [r.run_id for r in summary.runs] == [done]
        assert summary.running == (live,)
        assert "1 still running, not pushed" in summary.line()
        with pytest.raises(RunInProgressError, match=f"run {live} is still running"):
            push_runs(store, StoreTarget(Store(dst)), [live])
    with Store(dst) as team:
        assert team.run_holding(live) is None


def test_a_target_ahead_of_the_source_is_a_conflict_and_nothing_is_written(
    tmp_path: Path, store_location: str
) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_interrupted_run(src, "fork", 10, stop_after=4)
    push(src, dst)
    resume_run(dst, "fork", 10)  # resumed on the team store: it holds samples the source lacks
    with Store(dst) as team:
        before = (team.get_run(run_id), list(team.stored_samples(run_id)))
    with pytest.raises(PushError, match=rf"run {run_id} \(fork\): .* holds 6 sample") as caught:
        push(src, dst)
    assert caught.value.run_id == run_id
    with Store(dst) as team:
        assert (team.get_run(run_id), list(team.stored_samples(run_id))) == before


@pytest.mark.parametrize("prefix", ["wrong ", ""], ids=["other-predictions", "same-predictions"])
def test_a_run_resumed_on_both_sides_is_a_conflict_and_nothing_is_written(
    tmp_path: Path,
    store_location: str,
    prefix: str,
    aieval: Cli,
) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_interrupted_run(src, "fork", 10, stop_after=4)
    assert push(src, dst) == (1, 0, 0, 4)
    resume_run(dst, "fork", 10)  # on the team store: all right
    resume_run(src, "fork", 10, prefix=prefix)  # and here: the same ids, other samples
    with Store(dst) as team:
        before = (team.get_run(run_id), list(team.stored_samples(run_id)))
        report = build_report(team, run_id).to_dict()
    with pytest.raises(PushError, match=rf"run {run_id} \(fork\): .* 6 sample\(s\) .* differ"):
        push(src, dst)
    done = aieval("push", "--db", str(src), "--to", dst)
    assert done.returncode == 1, done.stderr
    assert run_id in done.stderr and "differ" in done.stderr
    with Store(dst) as team:
        assert (team.get_run(run_id), list(team.stored_samples(run_id))) == before
        assert build_report(team, run_id).to_dict() == report  # header and samples agree


def test_a_run_resumed_partly_there_and_fully_here_is_a_conflict(
    tmp_path: Path, store_location: str
) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_interrupted_run(src, "fork", 10, stop_after=4)
    push(src, dst)
    seen: list[str] = []

    def stops(example: Example) -> str:  # the team's resume is interrupted after 3 samples
        if len(seen) >= 3:
            raise KeyboardInterrupt
        seen.append(example.id)
        return str(example.expected)

    with pytest.raises(KeyboardInterrupt):
        run(name="fork", dataset=rows(10), scorers=[exact_match], target=stops, store=dst,
            resume=True, concurrency=1)  # fmt: skip
    resume_run(src, "fork", 10)  # the local store holds every id the team store holds, and more
    with Store(dst) as team:
        before = (team.get_run(run_id), list(team.stored_samples(run_id)))
        assert len(before[1]) == 7
    with pytest.raises(PushError, match=rf"run {run_id} \(fork\): .* 3 sample\(s\) .* differ"):
        push(src, dst)
    with Store(dst) as team:
        assert (team.get_run(run_id), list(team.stored_samples(run_id))) == before


def test_a_failing_write_leaves_nothing_of_the_run(tmp_path: Path) -> None:
    src, dst = tmp_path / "local.db", tmp_path / "team.db"
    first = make_run(src, "ok", 5)
    second = make_run(src, "broken", 700)  # more than one batch of rows
    with closing(sqlite3.connect(Store(dst).path)) as conn:  # the target refuses one sample
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON samples WHEN NEW.sample_id = 'q650'"
            " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
        )
        conn.commit()
    with pytest.raises(PushError, match=rf"cannot push run {second} \(broken\).*refused"):
        push(src, dst)
    with Store(dst) as team:
        assert team.run_holding(first) is not None  # pushed before it: stays
        assert team.run_holding(second) is None  # nothing half-written
        assert team.count_samples(second) == 0
    with closing(sqlite3.connect(dst)) as conn:
        conn.execute("DROP TRIGGER refuse")
        conn.commit()
    assert push(src, dst) == (1, 0, 1, 700)
    same_rows(src, dst)


@pytest.mark.slow
def test_a_workflow_run_keeps_its_verdicts_and_gates(
    tmp_path: Path, store_location: str, aieval: Cli
) -> None:
    src, dst = tmp_path / "local.db", store_location
    done = aieval("run", str(EXAMPLES / "code_review_eval.yaml"), "--db", str(src))
    assert done.returncode == 0, done.stderr
    pushed = aieval("push", "--db", str(src), "--to", str(dst))
    assert pushed.returncode == 0, pushed.stderr
    assert "pushed 1 run to" in pushed.stdout and "1 new" in pushed.stdout
    assert "(code-review-workflow): new" in pushed.stderr
    same_rows(src, dst)
    with Store(src) as a, Store(dst) as b:
        (run,) = a.list_runs()
        same_reports(a, b, run.id)
        verdicts = {s.id: s.verdict for s in b.iter_samples(run.id)}
        assert verdicts == {s.id: s.verdict for s in a.iter_samples(run.id)}
        failed = verdicts["cr-004-schema-violation"]
        assert failed is not None and failed.grade == "F"
        assert any(g.name == "schema_contract_valid" and not g.passed for g in failed.gates)
    again = aieval("push", "--db", str(src), "--to", str(dst))
    assert "0 new, 0 updated, 1 unchanged; 0 samples copied" in again.stdout


def test_the_command_explains_bad_targets(tmp_path: Path, aieval: Cli) -> None:
    src = tmp_path / "local.db"
    make_run(src, "x", 1)
    same = aieval("push", "--db", str(src), "--to", str(src))
    assert same.returncode == 2 and "is the store being pushed" in same.stderr
    other = aieval("push", "--db", str(src), "--to", "mysql://db/x")
    assert other.returncode == 2 and "--to: store location scheme 'mysql'" in other.stderr
    assert not (Path.cwd() / "mysql:").exists()
    none = aieval("push", "--db", str(tmp_path / "absent.db"), "--to", str(tmp_path / "t.db"))
    assert none.returncode == 2 and "no store at" in none.stderr
    missing = aieval("push", "--db", str(src))
    assert missing.returncode == 2 and "--to" in missing.stderr
    assert not (tmp_path / "t.db").exists()  # a refused push creates no target


@pytest.mark.slow
def test_progress_is_reported_as_samples_go(
    tmp_path: Path, store_location: str, aieval: Cli
) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_run(src, "many", 1200)
    seen: list[tuple[str, int, int]] = []
    with Store(src) as store:
        push_runs(
            store, StoreTarget(Store(dst)), progress=lambda r, d, t: seen.append((r.id, d, t))
        )
    assert seen[-1] == (run_id, 1200, 1200)
    pushed = aieval("push", "--db", str(src), "--to", str(tmp_path / "other.db"))  # progress lines
    assert f"{run_id}: 1200/1200 samples sent" in pushed.stderr


class _WriterInBetween(StoreTarget):
    """A store target where another writer changes the run after the push compared it and
    before the push writes it."""

    def __init__(self, store: Store, between: Callable[[], None]) -> None:
        super().__init__(store)
        self.between: Callable[[], None] | None = between

    def holding(self, run_id: str) -> RunHolding | None:
        held = super().holding(run_id)
        if self.between is not None:  # once: the push's second comparison sees it done
            self.between()
            self.between = None
        return held


def test_a_writer_between_the_comparison_and_the_write_is_compared_anew(
    tmp_path: Path, store_location: str
) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_interrupted_run(src, "race", 10, stop_after=4)
    assert push(src, dst) == (1, 0, 0, 4)
    resume_run(src, "race", 10)  # finished here: 6 samples to push

    def resumed_there() -> None:  # meanwhile the team store's copy is resumed there
        resume_run(dst, "race", 10, prefix="other ")

    # the write finds the run changed since the comparison; compared anew, the copies differ
    with Store(src) as source, pytest.raises(PushError, match=rf"run {run_id} \(race\): .* 6 samp"):
        push_runs(source, _WriterInBetween(Store(dst), resumed_there))
    with Store(dst) as team:  # the other writer's run, as it left it
        assert team.get_run(run_id).status == "completed"
        samples = list(team.stored_samples(run_id))
        assert len(samples) == 10
        assert sum((s.prediction or "").startswith("other ") for s in samples) == 6
        report = build_report(team, run_id).to_dict()
        assert (report["samples"], report["pass_rate"]["passed"]) == (10, 4)  # its own header


class _ComparedTogether(StoreTarget):
    """A store target whose first comparison waits until every concurrent push has compared:
    all of them find the run absent, then all of them write it."""

    def __init__(self, store: Store, barrier: threading.Barrier) -> None:
        super().__init__(store)
        self.barrier: threading.Barrier | None = barrier

    def holding(self, run_id: str) -> RunHolding | None:
        held = super().holding(run_id)
        if self.barrier is not None:
            self.barrier.wait(timeout=600)
            self.barrier = None
        return held


def test_pushes_of_the_same_runs_at_once_all_succeed(tmp_path: Path, store_location: str) -> None:
    src, dst = tmp_path / "local.db", store_location
    first, second = make_run(src, "qa", 12), make_run(src, "qa", 8, wrong_every=2)
    barrier = threading.Barrier(4)
    outcomes: list[list[str]] = []

    def push_once() -> list[str]:
        with Store(src) as source:
            summary = push_runs(source, _ComparedTogether(Store(dst), barrier))
        return [r.outcome for r in summary.runs]

    with ThreadPoolExecutor(4) as pool:
        outcomes = [f.result() for f in [pool.submit(push_once) for _ in range(4)]]
    # each run is new for one push; the others compare anew and find their own copy there
    for i in range(2):
        assert sorted(o[i] for o in outcomes) == ["new", "unchanged", "unchanged", "unchanged"]
    same_rows(src, dst)
    assert sample_count(dst, first) == 12 and sample_count(dst, second) == 8


def test_an_unchecked_write_refuses_a_sample_stored_otherwise(
    tmp_path: Path, store_location: str
) -> None:
    src, dst = tmp_path / "local.db", store_location
    run_id = make_interrupted_run(src, "race", 10, stop_after=4)
    assert push(src, dst) == (1, 0, 0, 4)
    resume_run(src, "race", 10)
    resume_run(dst, "race", 10, prefix="other ")  # as a server's upload would meet it
    with Store(src) as source, Store(dst) as team:
        before = (team.get_run(run_id), list(team.stored_samples(run_id)))
        mine = list(source.stored_samples(run_id))
        with pytest.raises(PushError, match=r"holds sample 'q\d' that differs"):
            team.import_run(source.get_run(run_id), mine)  # no comparison given: the server's
        assert (team.get_run(run_id), list(team.stored_samples(run_id))) == before
        # the same samples again (a repeated upload) are kept as they are
        assert team.import_run(team.get_run(run_id), before[1]).outcome == "unchanged"
