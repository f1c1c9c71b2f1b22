"""The online work queue in the store, on SQLite and PostgreSQL: examination once, claims
taken by exactly one worker (also by several processes at once), finishing only while the
claim is held, expired leases taken over, one run per window, requeues and backfill cursors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aieval import Store
from aieval.store import SettledTrace, WorkItem, window_run_id

T0 = 1_800_000_000.0


def _items(n: int, rule: str = "r", start: int = 0) -> list[WorkItem]:
    return [WorkItem(rule, f"{i:032x}", T0) for i in range(start, start + n)]


def test_an_examination_keeps_the_rows_a_trace_has(store_location: str) -> None:
    store = Store(store_location)
    trace = SettledTrace("t1", T0, T0, 1)
    items = [WorkItem("a", "t1", T0), WorkItem("b", "t1", T0, "skipped", "sampled_out")]
    assert store.record_examination(trace, items, None, T0) == 2
    again = [WorkItem("a", "t1", T0, "skipped", "sampled_out"), WorkItem("c", "t1", T0)]
    assert store.record_examination(trace, again, None, T0 + 1) == 1
    rows = store.online_work()
    assert [(w.rule, w.state, w.reason) for w in rows] == [
        ("a", "pending", None),
        ("b", "skipped", "sampled_out"),
        ("c", "pending", None),
    ]
    assert rows[1].finished_at == T0 and rows[0].finished_at is None


def test_enqueue_is_idempotent(store_location: str) -> None:
    store = Store(store_location)
    assert store.enqueue_online(_items(3), T0) == 3
    assert store.enqueue_online(_items(5), T0) == 2
    assert len(store.online_work("r")) == 5


def test_each_row_is_claimed_once_and_finished_only_while_held(store_location: str) -> None:
    store = Store(store_location)
    store.enqueue_online(_items(5), T0)
    first = store.claim_online("w1", 3, 60, T0)
    second = store.claim_online("w2", 10, 600, T0)
    assert len(first) == 3 and len(second) == 2
    assert not {w.trace_id for w in first} & {w.trace_id for w in second}
    assert store.claim_online("w3", 10, 60, T0 + 1) == []
    # w1's lease runs out: w3 takes its rows over, and w1 can no longer finish them
    taken = store.claim_online("w3", 10, 60, T0 + 61)
    assert {w.trace_id for w in taken} == {w.trace_id for w in first}
    assert store.finish_online("w1", first[0], "scored", run_id="x") is False
    assert store.finish_online("w3", taken[0], "scored", run_id="x") is True
    assert store.finish_online("w3", taken[0], "scored", run_id="x") is False
    assert store.finish_online("w2", second[0], "skipped", reason="error", message="boom")
    by_id = {w.trace_id: w for w in store.online_work()}
    assert by_id[taken[0].trace_id].state == "scored"
    assert (by_id[second[0].trace_id].reason, by_id[second[0].trace_id].message) == (
        "error",
        "boom",
    )


def test_a_released_row_waits_until_not_before(store_location: str) -> None:
    store = Store(store_location)
    store.enqueue_online(_items(1), T0)
    [work] = store.claim_online("w", 1, 60, T0)
    assert store.release_online("w", work, T0 + 30)
    assert store.claim_online("w", 1, 60, T0 + 29) == []
    [again] = store.claim_online("w", 1, 60, T0 + 30)
    assert again.attempts == 2
    assert store.renew_online("w", [again], 60, T0 + 80) == 1
    assert store.claim_online("x", 1, 60, T0 + 100) == []


def test_claims_keep_to_the_rules_given(store_location: str) -> None:
    store = Store(store_location)
    store.enqueue_online(_items(2, "a") + _items(2, "b"), T0)
    assert {w.rule for w in store.claim_online("w", 10, 60, T0, rules=["b"])} == {"b"}
    assert store.claim_online("w", 10, 60, T0, rules=[]) == []


def test_requeue_puts_back_only_the_reasons_asked_in_the_range(store_location: str) -> None:
    store = Store(store_location)
    store.enqueue_online(
        [
            WorkItem("r", "a", T0, "skipped", "budget_exhausted"),
            WorkItem("r", "b", T0, "skipped", "sampled_out"),
            WorkItem("r", "c", T0 + 3600, "skipped", "error", "boom"),
            WorkItem("r", "d", T0 + 7200, "skipped", "budget_exhausted"),
        ],
        T0,
    )
    assert store.requeue_online("r", T0, T0 + 7200, ["budget_exhausted", "error"], T0) == 2
    states = {w.trace_id: (w.state, w.reason) for w in store.online_work("r")}
    assert states == {
        "a": ("pending", None),
        "b": ("skipped", "sampled_out"),
        "c": ("pending", None),
        "d": ("skipped", "budget_exhausted"),
    }


def test_a_window_has_one_run(store_location: str) -> None:
    store = Store(store_location)
    assert store.online_window_run("r", T0, T0 + 3600) is None
    made = store.online_window_run("r", T0, T0 + 3600, create="online/r/x")
    again = Store(store_location).online_window_run("r", T0, T0 + 3600, create="online/r/x")
    assert made == again and made is not None
    assert made.run_id == window_run_id("r", T0)
    assert store.get_run(made.run_id).name == "online/r/x"
    assert [w.run_id for w in store.windows_to_close(T0 + 3600)] == [made.run_id]
    assert store.close_online_window("r", T0) is True
    assert store.close_online_window("r", T0) is False


def test_a_window_with_work_pending_is_not_closed(store_location: str) -> None:
    store = Store(store_location)
    store.online_window_run("r", T0, T0 + 3600, create="online/r/x")
    store.enqueue_online(_items(1), T0)
    assert store.windows_to_close(T0 + 4000) == []


def test_a_backfill_resumes_from_its_cursor(store_location: str) -> None:
    store = Store(store_location)
    backfill = store.online_backfill("r", T0, T0 + 10, now=T0)
    assert backfill.cursor == "" and backfill.done_at is None
    store.advance_backfill(backfill, "abc", now=T0)
    assert store.online_backfill("r", T0, T0 + 10).cursor == "abc"
    store.advance_backfill(backfill, "abd", done=True, now=T0 + 1)
    assert store.online_backfill("r", T0, T0 + 10).done_at == T0 + 1


_CLAIMER = """
import json, sys
from aieval import Store
store = Store(sys.argv[1])
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
got = []
while True:
    claimed = store.claim_online(sys.argv[2], 7, 600, 1_800_000_000.0)
    if not claimed:
        break
    for work in claimed:
        assert store.finish_online(sys.argv[2], work, "scored", run_id="r")
        got.append(work.trace_id)
print(json.dumps(got))
"""


def test_several_processes_claiming_at_once_take_each_row_once(
    store_location: str, tmp_path: Path
) -> None:
    store = Store(store_location)
    store.enqueue_online(_items(300), T0)
    src = str(Path(__file__).resolve().parents[2] / "src")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CLAIMER, store_location, f"w{n}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
        )
        for n in range(4)
    ]
    for proc in procs:  # every claimer opened the store: they start at once
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    taken: list[str] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        taken += json.loads(out)
    assert sorted(taken) == sorted(w.trace_id for w in _items(300))
    rows = store.online_work("r")
    assert all(w.state == "scored" and w.attempts == 1 for w in rows)
