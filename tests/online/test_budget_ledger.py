"""The spend ledger (``online_spend``) on both backends: calls reserved before they start never
exceed a limit, also with several processes reserving at once; tokens and cost are added when
a call ends and overshoot by at most the calls in flight."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aieval import Store
from aieval.online import Budget, window_start

NOW = 1_800_000_000.0  # a fixed moment: the hour and day rows are known
HOUR, DAY = window_start(NOW, "hour"), window_start(NOW, "day")


def _spend(store: Store, rule: str) -> dict[tuple[str, float], tuple[int, int, float, int]]:
    return {
        (r.period, r.period_start): (r.calls, r.tokens, r.cost, r.in_flight)
        for r in store.online_spend(rule)
    }


def test_calls_are_counted_on_hour_and_day_until_the_limit(store_location: str) -> None:
    store = Store(store_location)
    budget = Budget(calls_per_hour=3, calls_per_day=5)
    held = [store.reserve_online_call("r", budget, NOW) for _ in range(3)]
    assert all(h is not None for h in held)
    assert store.reserve_online_call("r", budget, NOW) is None  # the hour's 4th call
    assert _spend(store, "r") == {("hour", HOUR): (3, 0, 0.0, 3), ("day", DAY): (3, 0, 0.0, 3)}
    # the next hour has calls of its own; the day's limit counts them all: 2 more
    later = [store.reserve_online_call("r", budget, NOW + 3600) for _ in range(4)]
    assert sum(r is not None for r in later) == 2
    assert [r.calls for r in store.online_spend("r", since=HOUR + 3600)] == [2]
    # another rule spends its own budget
    assert store.reserve_online_call("other", budget, NOW) is not None


def test_settling_adds_tokens_and_cost_and_ends_the_flight(store_location: str) -> None:
    store = Store(store_location)
    budget = Budget(tokens_per_day=100, cost_per_hour=0.5)
    first = store.reserve_online_call("r", budget, NOW)
    assert first is not None
    store.settle_online_call(first, 60, 0.25)
    second = store.reserve_online_call("r", budget, NOW)
    assert second is not None  # 60 < 100 tokens, 0.25 < 0.5
    store.settle_online_call(second, 70, None)  # cost unknown: nothing added
    assert _spend(store, "r")[("day", DAY)] == (2, 130, 0.25, 0)
    # the tokens of the day are spent (130 >= 100): no call starts, nothing is counted
    assert store.reserve_online_call("r", budget, NOW) is None
    assert _spend(store, "r")[("hour", HOUR)] == (2, 130, 0.25, 0)


def test_a_zero_limit_allows_no_call(store_location: str) -> None:
    store = Store(store_location)
    assert store.reserve_online_call("r", Budget(cost_per_day=0.0), NOW) is None
    assert all(row[0] == 0 for row in _spend(store, "r").values())


_RESERVER = textwrap.dedent(
    """
    import json, sys
    from aieval import Store
    from aieval.online import Budget
    location, tries, now = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    store = Store(location)
    calls, tokens = Budget(calls_per_hour=25), Budget(tokens_per_day=95)
    print("ready", flush=True)
    sys.stdin.readline()  # all start together
    got = 0
    for _ in range(tries):
        got += store.reserve_online_call("calls", calls, now) is not None
        held = store.reserve_online_call("tokens", tokens, now)
        if held is not None:  # one call in flight per process, 10 tokens each
            store.settle_online_call(held, 10, 0.01)
    print(json.dumps(got), flush=True)
    """
)


@pytest.mark.slow
def test_processes_reserving_at_once_never_exceed_the_limit(
    store_location: str, tmp_path: Path
) -> None:
    Store(store_location).close()  # created once, before the processes race
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_src()), str(_root())])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RESERVER, store_location, "15", str(NOW)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for _ in range(4)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    got = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    store = Store(store_location)
    # 60 tries for 25 calls: exactly 25 counted, on the hour and on the day
    assert sum(got) == 25
    assert [r.calls for r in store.online_spend("calls")] == [25, 25]
    # a call starts only below 95 tokens (at 90 at most); the 4 processes' calls in flight
    # then end: 10 tokens each past it at most
    tokens = _spend(store, "tokens")[("day", DAY)]
    assert 100 <= tokens[1] <= 90 + 4 * 10 and tokens[3] == 0


def _src() -> Path:
    import aieval

    return Path(aieval.__file__).resolve().parent.parent


def _root() -> Path:
    return Path(__file__).resolve().parents[2]
