"""The online scoring engine on a real store: settled traces examined once, sampling and
filters decided at examination, matched traces scored into their window run, incomplete
traces waited for then skipped, budget refusals skipped and backfilled, windows closed."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator

from tests.support.online import T0, add_trace, put_rule, scored_rule, trace_ids

from aieval import Store
from aieval.online._model import OnlineRule, TraceFilter, sampled, window_run_name
from aieval.online._worker import BudgetExhausted, OnlineWorker
from aieval.store import window_run_id


def _counts(store: Store, rule: str) -> Counter[str]:
    return Counter(w.reason or w.state for w in store.online_work(rule))


def _samples(store: Store, rule: OnlineRule) -> list[str]:
    run = store.get_run(window_run_id(rule.name, T0))
    assert run.name == window_run_name(rule.name, T0, rule.window)
    return sorted(s.id for s in store.iter_samples(run.id))


def test_settled_traces_are_examined_once_and_scored_into_their_window(
    store_location: str,
) -> None:
    store = Store(store_location)
    rule = scored_rule(settle_s=30)
    put_rule(store, rule)
    ids = trace_ids(6)
    for trace_id in ids:
        add_trace(store, trace_id, T0 + 10)
    worker = OnlineWorker(store_location, "w1")
    assert worker.examine(T0 + 39) == 0  # not settled yet
    assert worker.examine(T0 + 41) == 6
    assert OnlineWorker(store_location, "w2").examine(T0 + 50) == 0  # examined once
    assert worker.work_once(T0 + 60) == 6
    assert _counts(store, rule.name) == {"scored": 6}
    assert _samples(store, rule) == sorted(ids)
    assert {w.run_id for w in store.online_work(rule.name)} == {window_run_id(rule.name, T0)}


def test_sampling_and_filters_are_decided_at_examination(store_location: str) -> None:
    store = Store(store_location)
    half = scored_rule("half", sampling_rate=0.5, settle_s=0)
    other = scored_rule("other", filter=TraceFilter(service_name="billing"), settle_s=0)
    put_rule(store, half)
    put_rule(store, other)
    ids = trace_ids(40)
    for trace_id in ids:
        add_trace(store, trace_id, T0 + 1, service="billing" if trace_id == ids[0] else "shop")
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    while worker.work_once(T0 + 3):
        pass
    kept = sorted(t for t in ids if sampled(t, 0.5))
    assert 0 < len(kept) < 40
    assert _counts(store, "half") == {"scored": len(kept), "sampled_out": 40 - len(kept)}
    assert _samples(store, half) == kept
    assert [w.trace_id for w in store.online_work("other")] == [ids[0]]


def test_an_incomplete_trace_waits_then_is_skipped_as_incomplete(store_location: str) -> None:
    store = Store(store_location)
    rule = scored_rule(settle_s=0, incomplete_after_s=100)
    put_rule(store, rule)
    [whole, part] = trace_ids(2)
    add_trace(store, whole, T0 + 1)
    add_trace(store, part, T0 + 1, complete=False)
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    assert worker.work_once(T0 + 3) == 2
    assert _counts(store, rule.name) == {"scored": 1, "pending": 1}
    assert worker.work_once(T0 + 20) == 0  # put back until later
    assert worker.work_once(T0 + 101) == 1
    [skipped] = [w for w in store.online_work(rule.name) if w.trace_id == part]
    assert (skipped.state, skipped.reason) == ("skipped", "incomplete")
    assert "parent never arrived" in (skipped.message or "")
    assert _samples(store, rule) == [whole]


def test_a_refused_budget_skips_the_trace_and_a_backfill_scores_it(store_location: str) -> None:
    store = Store(store_location)
    rule = scored_rule(settle_s=0)
    put_rule(store, rule)
    ids = trace_ids(5)
    for trace_id in ids:
        add_trace(store, trace_id, T0 + 1)
    allowed = [3]

    @contextlib.contextmanager
    def budget(_: OnlineRule) -> Iterator[None]:
        yield
        if allowed[0] <= 0:
            raise BudgetExhausted("calls_per_hour: 3 of 3 calls made")
        allowed[0] -= 1

    worker = OnlineWorker(store_location, "w", budget=budget)
    worker.examine(T0 + 2)
    worker.work_once(T0 + 3)
    assert _counts(store, rule.name) == {"scored": 3, "budget_exhausted": 2}
    assert len(_samples(store, rule)) == 3  # no partial sample of a refused trace
    allowed[0] = 10
    assert worker.backfill(rule.name, T0, T0 + 3600, now=T0 + 4) == 2
    assert worker.backfill(rule.name, T0, T0 + 3600, now=T0 + 4) == 0  # done: idempotent
    worker.work_once(T0 + 5)
    assert _counts(store, rule.name) == {"scored": 5}
    assert _samples(store, rule) == sorted(ids)


def test_a_backfill_enqueues_traces_received_before_the_rule(store_location: str) -> None:
    store = Store(store_location)
    ids = trace_ids(7)
    for n, trace_id in enumerate(ids):
        add_trace(store, trace_id, T0 + n)
    rule = scored_rule(settle_s=0)
    put_rule(store, rule)
    worker = OnlineWorker(store_location, "w", batch=3)
    assert worker.backfill(rule.name, T0 + 1, T0 + 6, now=T0 + 10) == 5
    assert worker.examine(T0 + 10) == 7  # examined: the backfilled rows are kept as they are
    while worker.work_once(T0 + 11):
        pass
    assert _counts(store, rule.name) == {"scored": 7}


def test_a_window_run_is_finished_once_its_window_ended_and_its_work_is_done(
    store_location: str,
) -> None:
    store = Store(store_location)
    rule = scored_rule(settle_s=0)
    put_rule(store, rule)
    add_trace(store, trace_ids(1)[0], T0 + 1)
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    worker.work_once(T0 + 3)
    run = store.get_run(window_run_id(rule.name, T0))
    assert run.status == "running"
    assert worker.close_windows(T0 + 3600) == 1
    finished = store.get_run(run.id)
    assert finished.status == "completed"
    assert finished.metrics["samples"] == 1  # its summary, as a run's
    assert worker.close_windows(T0 + 7200) == 0


def test_no_rule_no_examination(store_location: str) -> None:
    store = Store(store_location)
    add_trace(store, trace_ids(1)[0], T0)
    assert OnlineWorker(store_location, "w").examine(T0 + 1000) == 0
    put_rule(store, scored_rule(settle_s=0), paused=True)
    assert OnlineWorker(store_location, "w").examine(T0 + 1000) == 0
    assert store.online_work() == []


def test_an_open_window_run_reads_as_running_while_a_worker_is_alive(
    store_location: str,
) -> None:
    store = Store(store_location)
    rule = scored_rule(settle_s=0)
    put_rule(store, rule)
    add_trace(store, trace_ids(1)[0], T0 + 1)
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    worker.work_once(T0 + 3)
    run_id = window_run_id(rule.name, T0)
    store._write("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (time.time() - 1000, run_id))
    assert store.get_run(run_id).status == "interrupted"  # silent for longer than allowed
    OnlineWorker(store_location, "w2").work_once(T0 + 4)
    assert store.get_run(run_id).status == "running"
