"""Exactly once: a worker process killed with -9 in the middle of a backfill, and again between
storing a trace's sample and finishing its work row, then another worker taking over: every
matched trace ends with one work row in a final state and at most one sample, every scored
trace exactly one, and matched = scored + skipped."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from tests.support.online import add_trace, put_rule, scored_rule, trace_ids

from aieval import Store
from aieval.online import OnlineWorker, sampled
from aieval.online._worker import LEASE_S

pytestmark = pytest.mark.slow

#: A worker process that stops for good (waits on its stdin) at a chosen point: after
#: ``advance_backfill`` was called N times, or after N samples were stored.
_WORKER = """
import sys
from aieval.online import OnlineWorker
location, hook, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
since, until = float(sys.argv[4]), float(sys.argv[5])
worker = OnlineWorker(location, sys.argv[6], batch=10)
calls = [0]
original = getattr(worker.store, hook)
def hooked(*args, **kwargs):
    result = original(*args, **kwargs)
    calls[0] += 1
    if calls[0] == after:
        print(hook, flush=True)
        sys.stdin.readline()  # killed here
    return result
setattr(worker.store, hook, hooked)
worker.backfill("support", since, until)
while worker.work_once():
    pass
print("finished", flush=True)
"""


def _worker(
    location: str, hook: str, after: int, since: float, until: float, name: str = "doomed"
) -> subprocess.Popen[str]:
    """A worker process that stops at the point chosen (``after`` 0: runs to the end)."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    args = [location, hook, str(after), str(since), str(until), name]
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
    )


def _doomed(location: str, hook: str, after: int, since: float, until: float) -> None:
    """Run a worker process until it reaches the point chosen, then kill it with -9."""
    proc = _worker(location, hook, after, since, until)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"{hook}\n"
    finally:
        proc.kill()
        proc.wait(timeout=60)


def test_a_worker_killed_mid_backfill_and_mid_work_loses_and_doubles_nothing(
    store_location: str,
) -> None:
    store = Store(store_location)
    rule = scored_rule(settle_s=0, sampling_rate=0.8)
    put_rule(store, rule)
    received = time.time() - 60
    ids = trace_ids(120)
    for trace_id in ids:
        add_trace(store, trace_id, received)
    since, until = received - 1, received + 1

    _doomed(store_location, "advance_backfill", 3, since, until)
    backfill = store.online_backfill("support", since, until)
    assert backfill.done_at is None and backfill.cursor == ids[29]
    assert len(store.online_work("support")) == 30

    _doomed(store_location, "record_samples", 40, since, until)
    claimed = [w for w in store.online_work("support") if w.state == "claimed"]
    assert claimed  # the killed worker's claims, one of them with its sample stored

    # another worker, once the killed one's leases ran out
    later = time.time() + LEASE_S + 1
    worker = OnlineWorker(store_location, "survivor", batch=25)
    worker.backfill("support", since, until, now=later)
    worker.examine(later)
    while worker.work_once(later):
        pass

    work = store.online_work("support")
    assert sorted(w.trace_id for w in work) == ids  # each matched trace once
    states = Counter(w.reason or w.state for w in work)
    kept = {t for t in ids if sampled(t, 0.8)}
    assert states == {"scored": len(kept), "sampled_out": len(ids) - len(kept)}
    assert states["scored"] + states["sampled_out"] == len(ids)  # matched = scored + skipped
    runs = {w.run_id for w in work if w.run_id is not None}
    stored = [s.id for run_id in runs for s in store.iter_samples(run_id)]
    assert sorted(stored) == sorted(kept)  # one sample per scored trace
    assert all(w.run_id is not None for w in work if w.state == "scored")


def test_two_servers_share_the_queue_and_one_killed_loses_nothing(store_location: str) -> None:
    store = Store(store_location)
    put_rule(store, scored_rule(settle_s=0))
    received = time.time() - 60
    ids = trace_ids(80)
    for trace_id in ids:
        add_trace(store, trace_id, received)
    since, until = received - 1, received + 1
    # the doomed server stops mid-batch, alive and holding its claims, while the other works
    doomed = _worker(store_location, "record_samples", 5, since, until, "doomed")
    other: subprocess.Popen[str] | None = None
    try:
        assert doomed.stdout is not None
        assert doomed.stdout.readline() == "record_samples\n"
        other = _worker(store_location, "record_samples", 0, since, until, "other")
        assert other.stdout is not None
        assert other.communicate(timeout=300)[0] == "finished\n"
        held = [w for w in store.online_work("support") if w.state == "claimed"]
        assert held and {w.claimed_by for w in held} == {"doomed"}  # passed over, not taken
    finally:
        for proc in (doomed, other):
            if proc is not None:
                proc.kill()
                proc.wait(timeout=60)
    by_worker = Counter(w.claimed_by for w in store.online_work("support"))
    assert by_worker["other"] > 0  # both took a share
    later = time.time() + LEASE_S + 1
    survivor = OnlineWorker(store_location, "survivor")
    while survivor.work_once(later):
        pass
    work = store.online_work("support")
    assert sorted(w.trace_id for w in work) == ids
    assert Counter(w.state for w in work) == {"scored": len(ids)}
    runs = {w.run_id for w in work if w.run_id is not None}
    assert sorted(s.id for run_id in runs for s in store.iter_samples(run_id)) == ids
