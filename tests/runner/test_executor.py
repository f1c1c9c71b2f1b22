"""LocalExecutor: bounded concurrency, errors per item, completion order, lazy input."""

from __future__ import annotations

import asyncio

import pytest
from tests.support.executor_fns import Counted, double, fail_on_three, rouge, rouge_async, rows

from aieval.errors import ConfigError
from aieval.runner import Executor, Finished, LocalExecutor, RayExecutor


async def collect(executor: Executor, fn, items) -> list[Finished]:
    return [done async for done in executor.map(fn, items)]


async def test_every_item_finishes_once_with_its_index() -> None:
    data = rows(30)
    results = await collect(LocalExecutor(4), rouge, data)
    assert sorted(r.index for r in results) == list(range(30))
    for r in results:
        assert r.ok and r.item is data[r.index] and r.attempts == 1
        assert r.value == rouge(data[r.index])


async def test_async_functions_overlap_and_respect_the_bound() -> None:
    running = peak = 0

    async def slow(value: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return value

    executor = LocalExecutor(5)
    results = await collect(executor, slow, range(40))
    assert peak == 5 and executor.peak_in_flight == 5
    assert sorted(r.value for r in results) == list(range(40))


async def test_results_come_in_completion_order() -> None:
    async def wait(delay: float) -> float:
        await asyncio.sleep(delay)
        return delay

    results = await collect(LocalExecutor(3), wait, [0.06, 0.0, 0.03])
    assert [r.value for r in results] == [0.0, 0.03, 0.06]
    assert [r.index for r in results] == [1, 2, 0]


async def test_an_exception_is_that_items_error_only() -> None:
    results = {r.index: r for r in await collect(LocalExecutor(2), fail_on_three, range(6))}
    assert results[3].error == "ValueError: three is not allowed" and results[3].value is None
    assert not results[3].ok
    assert [results[i].value for i in (0, 1, 2, 4, 5)] == [0, 2, 4, 8, 10]


async def test_items_are_pulled_lazily() -> None:
    source = Counted(10_000)
    seen = 0
    async for _ in LocalExecutor(8).map(double, source):
        seen += 1
        assert source.pulled - seen <= 8
        if seen == 100:
            break
    assert source.pulled <= 108


async def test_an_async_function_gives_the_same_values_as_a_sync_one() -> None:
    data = rows(10)
    sync = {r.index: r.value for r in await collect(LocalExecutor(3), rouge, data)}
    asyn = {r.index: r.value for r in await collect(LocalExecutor(3), rouge_async, data)}
    assert sync == asyn


@pytest.mark.parametrize(
    ("make", "field"),
    [
        pytest.param(lambda: LocalExecutor(0), "concurrency", id="local-concurrency"),
        pytest.param(lambda: RayExecutor(batch_size=0), "batch_size", id="ray-batch-size"),
        pytest.param(lambda: RayExecutor(max_in_flight=-1), "max_in_flight", id="ray-in-flight"),
        pytest.param(lambda: RayExecutor(batch_timeout=0), "batch_timeout", id="ray-timeout"),
        pytest.param(lambda: RayExecutor(max_attempts=True), "max_attempts", id="ray-attempts"),
    ],
)
def test_bad_settings_are_refused_by_name(make, field: str) -> None:
    with pytest.raises(ConfigError, match=f"^{field} must be a positive"):
        make()
