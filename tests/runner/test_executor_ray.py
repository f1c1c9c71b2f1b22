"""RayExecutor on a real local Ray cluster (2 CPUs, started once per session)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
from tests.support.executor_fns import (
    Counted,
    Unloadable,
    double,
    exit_on_three,
    fail_on_three,
    hang_on_zero,
    lock_on_seven,
    rouge,
    rouge_async,
    rows,
    sleep_for,
)
from tests.support.ray_fns import base_on_three, generator_exit_on_five

from aieval.runner import Finished, LocalExecutor, RayExecutor


async def by_index(executor: Any, fn: Any, items: Any) -> dict[int, Finished[Any, Any]]:
    results: dict[int, Finished[Any, Any]] = {}
    async for done in executor.map(fn, items):
        assert done.index not in results, "an item finished twice"
        results[done.index] = done
    return results


@pytest.mark.slow
async def test_ray_gives_the_local_executors_scores(ray_cluster: Any) -> None:
    data = rows(300)
    local = await by_index(LocalExecutor(4), rouge, data)
    remote = await by_index(RayExecutor(batch_size=16), rouge, data)
    assert sorted(remote) == list(range(300))
    assert {i: r.value for i, r in remote.items()} == {i: r.value for i, r in local.items()}
    assert all(r.ok and r.item == data[i] for i, r in remote.items())
    assert len({r.value for r in remote.values()}) > 5, "the rows must not all score alike"


async def test_async_functions_run_on_the_workers(ray_cluster: Any) -> None:
    data = rows(40)
    results = await by_index(RayExecutor(batch_size=8), rouge_async, data)
    assert {i: r.value for i, r in results.items()} == {i: rouge(data[i]) for i in range(40)}


async def test_a_raising_function_is_an_error_on_that_sample(ray_cluster: Any) -> None:
    results = await by_index(RayExecutor(batch_size=4), fail_on_three, range(10))
    assert results[3].error == "ValueError: three is not allowed"
    assert {i: r.value for i, r in results.items() if i != 3} == {
        i: i * 2 for i in range(10) if i != 3
    }


async def test_a_base_exception_is_an_error_on_that_sample_not_its_batch(
    ray_cluster: Any,
) -> None:
    # as on the local executor: a user's own BaseException, or GeneratorExit, is that item's
    for fn, bad, error in [
        (base_on_three, 3, "Boom: three"),
        (generator_exit_on_five, 5, "GeneratorExit: five"),
    ]:
        results = await by_index(RayExecutor(batch_size=10), fn, range(10))
        assert {i: r.error for i, r in results.items() if r.error} == {bad: error}
        assert {i: r.value for i, r in results.items() if i != bad} == {
            i: i * 2 for i in range(10) if i != bad
        }
        assert all(r.attempts == 1 for r in results.values()), "nothing was retried"


async def test_an_item_or_a_result_that_cannot_be_pickled_is_that_items_error(
    ray_cluster: Any,
) -> None:
    import threading

    items: list[Any] = list(range(12))
    items[4] = {"fine": 1, "lock": threading.Lock()}
    results = await by_index(RayExecutor(batch_size=12), lock_on_seven, items)
    assert sorted(results) == list(range(12))
    sent = results[4].error or ""
    assert sent.startswith("the sample cannot be sent to a Ray worker: ['lock'] is _thread.lock")
    back = results[7].error or ""
    assert back.startswith("the result cannot be sent back from its Ray worker: _thread.lock")
    assert "cannot pickle '_thread.lock' object" in back
    others = {i: r.value for i, r in results.items() if i not in (4, 7)}
    assert others == {i: 2 * i for i in range(12) if i not in (4, 7)}
    assert all(results[i].error is None for i in others)


async def test_a_worker_killed_mid_batch_costs_only_its_sample(ray_cluster: Any) -> None:
    executor = RayExecutor(batch_size=4, max_attempts=2)
    results = await by_index(executor, exit_on_three, range(10))
    assert sorted(results) == list(range(10))
    crashed = results[3]
    assert crashed.value is None and crashed.attempts == 2
    crash = "sample processing crashed (worker died, 2 attempts): "
    assert crashed.error is not None and crashed.error.startswith(crash), crashed.error
    assert "WorkerCrashedError" in crashed.error, "Ray's own account follows"
    assert {i: r.value for i, r in results.items() if i != 3} == {
        i: i * 2 for i in range(10) if i != 3
    }
    # Its batch mates were re-run on their own; the other batches ran once.
    assert {i for i, r in results.items() if r.attempts == 2} == {0, 1, 2, 3}
    assert executor.crashed_batches == 2


@pytest.mark.slow
async def test_a_stuck_sample_times_out_alone(ray_cluster: Any) -> None:
    # the limit is waited out twice (the batch, then the stuck item alone): 4 s, as the items
    # that must not time out only double a number once their worker has started
    executor = RayExecutor(batch_size=2, batch_timeout=4.0)
    results = await by_index(executor, hang_on_zero, range(6))
    assert sorted(results) == list(range(6))
    assert results[0].error is not None and results[0].error.startswith("TimeoutError")
    assert {i: results[i].value for i in range(1, 6)} == {i: i * 2 for i in range(1, 6)}
    assert results[1].attempts == 2, "its batch mate ran again on its own"


@pytest.mark.slow
async def test_the_timeout_counts_from_the_start_on_a_worker_not_from_submission(
    ray_cluster: Any,
) -> None:
    # Two CPUs, four batches of one item submitted at once: the second pair waits for the
    # first. Each short item runs 2.5 s, 2 s within the 4.5 s limit once it starts, but the
    # last one ends more than 4.5 s after it was submitted; the 60 s one is still cancelled.
    timeout, short = 4.5, 2.5
    executor = RayExecutor(batch_size=1, max_in_flight=4, batch_timeout=timeout)
    submitted = time.time()
    results = await by_index(executor, sleep_for, [60.0, short, short, short])
    assert results[0].error == "TimeoutError: the sample ran longer than batch_timeout=4.5s"
    assert results[0].attempts == 1
    assert all(results[i].ok for i in (1, 2, 3)), [results[i].error for i in (1, 2, 3)]
    spans = sorted(results[i].value for i in (1, 2, 3))
    assert spans[-1][0] >= spans[0][1] - 0.5, "the last short item waited for a free worker"
    assert spans[-1][1] - submitted > timeout, "it ended later than the limit after submission"


@pytest.mark.slow
async def test_unset_batch_size_grows_only_batches_of_quick_small_items(
    ray_cluster: Any,
) -> None:
    quick = RayExecutor()
    # 4 batches of 64 go out before the first is measured; 6,000 leave room to grow
    results = await by_index(quick, double, range(6_000))
    assert {i: r.value for i, r in results.items()} == {i: i * 2 for i in range(6_000)}
    assert 64 < quick.largest_batch <= 4096, "quick items: bigger batches"
    # 64 items of 10 ms take longer than the quarter second a batch aims at: no growth.
    slow = RayExecutor()
    timed = await by_index(slow, sleep_for, [0.01] * 400)
    assert all(r.ok for r in timed.values()) and slow.largest_batch == 64
    # Quick but 200 kB each: 64 of them are already more than the 8 MiB a batch may hold.
    large = RayExecutor()
    sizes = await by_index(large, len, (b"x" * 200_000 for _ in range(600)))
    assert {r.value for r in sizes.values()} == {200_000} and large.largest_batch == 64


async def test_a_large_generator_never_has_more_than_the_bound_in_flight(
    ray_cluster: Any,
) -> None:
    source = Counted(5_000)
    batch_size, max_in_flight = 50, 3
    bound = batch_size * max_in_flight
    executor = RayExecutor(batch_size=batch_size, max_in_flight=max_in_flight)
    total = seen = worst = 0
    async for done in executor.map(double, source):
        seen += 1
        total += done.value
        worst = max(worst, source.pulled - seen)
    assert seen == 5_000 and total == 2 * sum(range(5_000))
    assert worst < bound
    assert 0 < executor.peak_in_flight <= bound


async def test_a_function_the_workers_cannot_load_fails_every_sample_loudly(
    ray_cluster: Any,
) -> None:
    results = await by_index(RayExecutor(batch_size=3), Unloadable(), range(7))
    assert sorted(results) == list(range(7))
    assert all(r.error and "not installed on the workers" in r.error for r in results.values())


async def test_leaving_early_cancels_the_rest_and_keeps_ray_usable(ray_cluster: Any) -> None:
    seen = 0
    async for _ in RayExecutor(batch_size=10, max_in_flight=2).map(double, Counted(10_000)):
        seen += 1
        if seen == 15:
            break
    results = await by_index(RayExecutor(batch_size=5), double, range(20))
    assert {i: r.value for i, r in results.items()} == {i: i * 2 for i in range(20)}


def run_alone(body: str, env: dict[str, str] | None = None) -> str:
    """Run ``body`` (with ``main()`` and ``ConfigError`` in scope) in a fresh interpreter."""
    code = textwrap.dedent(
        """
        import asyncio, sys
        from aieval.errors import ConfigError
        from aieval.runner import RayExecutor
        """
    ) + textwrap.dedent(body)
    environment = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_without_ray_the_error_says_which_extra_to_install() -> None:
    out = run_alone(
        """
        sys.modules["ray"] = None
        async def main():
            async for _ in RayExecutor().map(abs, [1]):
                pass
        try:
            asyncio.run(main())
        except ConfigError as exc:
            print(exc)
        """
    )
    assert "pip install 'aieval[ray]'" in out


def test_an_address_nobody_answers_is_refused_at_once() -> None:
    # one fresh interpreter (each costs seconds on a busy machine) tries the three addresses
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cases = {
        "closed-port": (f"127.0.0.1:{port}", f"no Ray cluster answers at '127.0.0.1:{port}'"),
        "closed-client-port": (f"ray://127.0.0.1:{port}", "no Ray cluster answers"),
        "no-port": ("head-node", "is not 'host:port'"),
    }
    out = run_alone(
        f"""
        import json
        async def main(address):
            async for _ in RayExecutor(address=address).map(abs, [1]):
                pass
        refused = {{}}
        for case, address in { ({k: v[0] for k, v in cases.items()})!r}.items():
            try:
                asyncio.run(main(address))
            except ConfigError as exc:
                refused[case] = str(exc)
        print(json.dumps(refused))
        """,
        env={"RAY_ADDRESS": ""},
    )
    refused = json.loads(out.strip().splitlines()[-1])
    assert set(refused) == set(cases), refused
    for case, (_, expected) in cases.items():
        assert refused[case].startswith("ray_address: ") and expected in refused[case], case


def test_settings_are_kept() -> None:
    executor = RayExecutor(address="auto", batch_size=8, max_in_flight=2, max_attempts=3)
    assert (executor.address, executor.batch_size, executor.max_in_flight) == ("auto", 8, 2)
    assert executor.max_attempts == 3
