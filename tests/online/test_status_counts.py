"""``online_status`` on both store backends: per rule and window, matched = scored + skipped by
reason + pending + claimed, expired claims, the lag, the most common errors, the spend against
the budget read from the rule's spec, and a stalled rule said in words."""

from __future__ import annotations

import json

import pytest
from tests.support.online_status_rows import add_rule, add_spend, add_window_run, add_work

from aieval.online import online_status, window_start
from aieval.store import Store

T0 = 1_790_002_800.0  # an hour's start
NOW = T0 + 2 * 3600 + 100
HOUR = window_start(NOW, "hour")
DAY = window_start(NOW, "day")
SPEC = {
    "name": "support",
    "window": "hour",
    "budget": {"calls_per_hour": 10, "calls_per_day": 100, "cost_per_day": 2.5},
}


def _seed(store: Store) -> str:
    add_rule(store, "support", SPEC)
    add_rule(store, "quiet", {"name": "quiet", "window": "day"}, source="api", paused=True)
    run_id = add_window_run(store, "support", T0, "hour", passed=3, failed=1)
    # window T0: 4 scored, 2 sampled out, 1 over budget, 1 incomplete, 3 errors (two alike)
    done = {"window_start": T0, "matched_at": T0 + 10, "finished_at": T0 + 60}
    for i in range(4):
        add_work(store, "support", f"s{i}", state="scored", run_id=run_id, **done)
    for i, reason in enumerate(["sampled_out", "sampled_out", "budget_exhausted", "incomplete"]):
        add_work(store, "support", f"k{i}", state="skipped", reason=reason, **done)
    for i, message in enumerate(["judge timed out", "judge timed out", "bad verdict"]):
        add_work(
            store, "support", f"e{i}", state="skipped", reason="error", message=message, **done
        )
    # window T0+1h: 2 pending (one waiting for its spans), a claim past its lease, a live one
    later = T0 + 3600
    add_work(store, "support", "p0", window_start=later, state="pending", matched_at=later + 5)
    add_work(
        store,
        "support",
        "p1",
        window_start=later,
        state="pending",
        matched_at=later + 50,
        not_before=NOW + 60,
    )
    add_work(
        store,
        "support",
        "c0",
        window_start=later,
        state="claimed",
        matched_at=later,
        claimed_until=NOW - 1,
    )
    add_work(
        store,
        "support",
        "c1",
        window_start=later,
        state="claimed",
        matched_at=later,
        claimed_until=NOW + 30,
    )
    add_spend(store, "support", "hour", HOUR, calls=10, tokens=900, cost=0.5, in_flight=1)
    add_spend(store, "support", "day", DAY, calls=40, tokens=5000, cost=1.25)
    add_spend(store, "support", "hour", HOUR - 3600, calls=7)  # an earlier hour: not shown
    return run_id


def test_counts_per_rule_and_window_add_up_on_both_backends(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = _seed(store)
        status = online_status(store, NOW)
    assert status.adds_up
    assert [r.name for r in status.rules] == ["quiet", "support"]
    quiet, support = status.rules
    assert (quiet.source, quiet.paused, quiet.window, quiet.counts.matched) == (
        "api",
        True,
        "day",
        0,
    )
    assert not quiet.stalled and quiet.windows == ()
    counts = support.counts
    assert (counts.matched, counts.scored, counts.skipped_total) == (15, 4, 7)
    assert counts.skipped == {
        "sampled_out": 2,
        "budget_exhausted": 1,
        "incomplete": 1,
        "error": 3,
    }
    assert (counts.pending, counts.claimed, counts.expired_claims) == (2, 2, 1)
    assert status.counts == counts  # the one rule with work is all of it
    first, second = support.windows
    assert (first.start, first.end, first.run_id) == (T0, T0 + 3600, run_id)
    assert first.name == "online/support/2026-09-21T15"
    assert (first.counts.matched, first.counts.scored, first.counts.pending) == (11, 4, 0)
    assert (first.samples, first.judged, first.passed, first.pass_rate) == (4, 4, 3, 0.75)
    assert first.pass_low is not None and first.pass_high is not None
    assert first.pass_low < 0.75 < first.pass_high
    assert second.run_id is None and second.pass_rate is None
    assert second.name == "online/support/2026-09-21T16"
    assert (second.counts.matched, second.counts.pending, second.counts.claimed) == (4, 2, 2)
    assert support.lag_s == pytest.approx(NOW - (T0 + 3605))
    assert support.last_finished_at == T0 + 60
    assert [(e.message, e.count) for e in support.errors] == [
        ("judge timed out", 2),
        ("bad verdict", 1),
    ]
    hour, day = support.spend
    assert (hour.period, hour.period_start, hour.calls, hour.in_flight) == ("hour", HOUR, 10, 1)
    assert (hour.calls_limit, hour.exhausted) == (10, True)
    assert (day.calls, day.tokens, day.cost, day.calls_limit, day.cost_limit) == (
        40,
        5000,
        1.25,
        100,
        2.5,
    )
    assert not day.exhausted
    # a claim past its lease: the server holding it stopped
    assert support.stalled and support.stalled_reason is not None
    assert "1 claimed item(s) are past their lease" in support.stalled_reason
    json.dumps(status.to_dict())  # JSON-able as it is


def test_a_rule_whose_pending_items_wait_too_long_is_stalled_in_words(tmp_path: object) -> None:
    with Store(f"{tmp_path}/runs.db") as store:
        add_rule(store, "busy")
        add_rule(store, "idle")
        add_rule(store, "held", paused=True)
        # busy: a pending item younger than the threshold, an item finished a minute ago
        add_work(store, "busy", "a", window_start=T0, state="pending", matched_at=NOW - 30)
        add_work(
            store,
            "busy",
            "b",
            window_start=T0,
            state="scored",
            matched_at=NOW - 90,
            finished_at=NOW - 60,
        )
        # idle: claimable for 10 minutes, nothing ever finished
        add_work(store, "idle", "a", window_start=T0, state="pending", matched_at=NOW - 600)
        # an item waiting for its spans until later is not late yet
        add_work(
            store,
            "idle",
            "b",
            window_start=T0,
            state="pending",
            matched_at=NOW - 3000,
            not_before=NOW + 10,
        )
        add_work(store, "held", "a", window_start=T0, state="pending", matched_at=NOW - 900)
        status = online_status(store, NOW, stall_after_s=300)
    busy, held, idle = status.rules
    assert not busy.stalled and busy.stalled_reason is None
    assert idle.stalled
    assert idle.stalled_reason == (
        "no server is claiming its items: 2 pending item(s), the oldest claimable for 10m"
        " (more than 5m); no item of it has ever finished"
    )
    assert idle.lag_s == 3000  # the lag counts from the match, whatever the wait
    assert held.stalled and held.stalled_reason is not None
    assert held.stalled_reason.startswith("the rule is paused: 1 pending item(s) wait")
    assert status.adds_up


def test_a_state_no_version_writes_breaks_the_check_loudly(tmp_path: object) -> None:
    with Store(f"{tmp_path}/runs.db") as store:
        add_rule(store, "r")
        add_work(store, "r", "a", window_start=T0, state="scored")
        add_work(store, "r", "b", window_start=T0, state="lost")
        status = online_status(store, NOW)
    assert status.rules[0].counts.matched == 2
    assert not status.rules[0].counts.adds_up
    assert not status.adds_up


def test_an_unreadable_spec_shows_no_limits_and_a_deleted_rules_work_stays(
    tmp_path: object,
) -> None:
    with Store(f"{tmp_path}/runs.db") as store:
        store._write(
            "INSERT INTO online_rules (name, spec, source, paused, created_at, updated_at)"
            " VALUES ('odd', 'not json', 'file', 0, 0, 0)",
            (),
        )
        add_work(store, "gone", "a", window_start=T0, state="scored", finished_at=T0)
        status = online_status(store, NOW)
    gone, odd = status.rules
    assert (gone.source, gone.counts.scored) == (None, 1)
    assert odd.budget.unlimited and odd.window == "hour"
    assert [s.calls_limit for s in odd.spend] == [None, None]


def test_windows_older_than_the_history_are_counted_not_listed(tmp_path: object) -> None:
    with Store(f"{tmp_path}/runs.db") as store:
        add_rule(store, "r")
        old = T0 - 8 * 86400
        add_window_run(store, "r", old, "hour", passed=1, failed=0)
        add_work(store, "r", "a", window_start=old, state="scored", finished_at=old)
        add_work(store, "r", "b", window_start=T0, state="scored", finished_at=T0)
        status = online_status(store, NOW)
        everything = online_status(store, NOW, history_s=10 * 86400)
    (rule,) = status.rules
    assert [w.start for w in rule.windows] == [T0]
    assert rule.counts.matched == 2
    assert [w.start for w in everything.rules[0].windows] == [old, T0]
