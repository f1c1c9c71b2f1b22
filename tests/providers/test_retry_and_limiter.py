"""RetryPolicy arithmetic and AdaptiveLimiter behaviour, without a network."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.errors import (
    ConfigError,
    ProviderHTTPError,
    ProviderServerError,
    RateLimitError,
)
from aieval.providers import AdaptiveLimiter, RetryPolicy


@given(
    attempt=st.integers(min_value=0, max_value=200),
    initial=st.floats(min_value=0, max_value=10),
    maximum=st.floats(min_value=0, max_value=100),
    multiplier=st.floats(min_value=1, max_value=10),
)
def test_backoff_is_bounded_and_jittered(
    attempt: int, initial: float, maximum: float, multiplier: float
) -> None:
    policy = RetryPolicy(initial_delay=initial, max_delay=maximum, multiplier=multiplier)
    exact = RetryPolicy(
        initial_delay=initial, max_delay=maximum, multiplier=multiplier, jitter=False
    ).delay(attempt)
    assert exact == pytest.approx(min(maximum, initial * multiplier ** min(attempt, 64)))
    assert 0.5 * exact <= policy.delay(attempt) <= exact


@given(st.integers(min_value=0, max_value=30))
def test_backoff_never_shrinks_between_attempts(attempt: int) -> None:
    policy = RetryPolicy(jitter=False)
    assert policy.delay(attempt + 1) >= policy.delay(attempt)


@given(st.floats(min_value=0, max_value=1e5, allow_nan=False))
def test_retry_after_is_honoured_up_to_the_cap(retry_after: float) -> None:
    policy = RetryPolicy(max_retry_after=60.0)
    error = RateLimitError("slow down", retry_after=retry_after)
    assert policy.delay(0, error) == min(retry_after, 60.0)


def test_rate_limit_without_retry_after_backs_off() -> None:
    policy = RetryPolicy(initial_delay=0.25, jitter=False)
    assert policy.delay(1, RateLimitError("slow down")) == 0.5


@pytest.mark.parametrize(
    ("error", "retries_so_far", "expected"),
    [
        pytest.param(ProviderServerError("x"), 0, True, id="5xx-first"),
        pytest.param(ProviderServerError("x"), 3, False, id="5xx-exhausted"),
        pytest.param(RateLimitError("x"), 2, True, id="429"),
        pytest.param(ProviderHTTPError("x", status=400), 0, False, id="400"),
    ],
)
def test_should_retry(error: ProviderServerError, retries_so_far: int, expected: bool) -> None:
    assert RetryPolicy(max_retries=3).should_retry(error, retries_so_far) is expected


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"max_retries": -1}, id="retries"),
        pytest.param({"initial_delay": -0.1}, id="initial"),
        pytest.param({"max_delay": -1}, id="max-delay"),
        pytest.param({"multiplier": 0.5}, id="multiplier"),
    ],
)
def test_invalid_policy_is_a_config_error(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_limiter_rejects_zero() -> None:
    with pytest.raises(ConfigError, match="concurrency must be >= 1"):
        AdaptiveLimiter(0)


@pytest.mark.parametrize("limit", [pytest.param(n, id=f"limit-{n}") for n in (1, 3, 8)])
async def test_limiter_caps_in_flight(limit: int) -> None:
    limiter = AdaptiveLimiter(limit)
    peak = 0

    async def task() -> None:
        nonlocal peak
        async with limiter.slot():
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.001)

    await asyncio.gather(*(task() for _ in range(5 * limit)))
    assert peak == limit
    assert limiter.in_flight == 0


async def test_one_halving_per_window() -> None:
    limiter = AdaptiveLimiter(8, default_cooldown=0.0)
    slots = [limiter.slot() for _ in range(6)]
    for slot in slots:
        await slot.__aenter__()
    for slot in slots:  # six 429s for requests sent under the same limit
        slot.rate_limited()
        await slot.__aexit__(None, None, None)
    assert limiter.limit == 4
    async with limiter.slot() as later:  # a 429 under the new limit cuts again
        later.rate_limited()
    assert limiter.limit == 2


async def test_limit_never_below_one() -> None:
    limiter = AdaptiveLimiter(2, default_cooldown=0.0)
    for _ in range(5):
        async with limiter.slot() as slot:
            slot.rate_limited()
    assert limiter.limit == 1


async def test_additive_increase_back_to_max() -> None:
    limiter = AdaptiveLimiter(4, default_cooldown=0.0)
    async with limiter.slot() as slot:
        slot.rate_limited()
    assert limiter.limit == 2
    grown = []
    for _ in range(20):
        async with limiter.slot() as slot:
            slot.succeeded()
        grown.append(limiter.limit)
    assert grown[:2] == [2, 3]  # two successes at limit 2 grow it to 3
    assert grown[-1] == 4
    assert max(grown) == 4


async def test_cooldown_holds_every_waiting_request() -> None:
    limiter = AdaptiveLimiter(4)
    # timed from before the 429: a pause between it and the waits must not shorten them
    started = time.monotonic()
    async with limiter.slot() as slot:
        slot.rate_limited(retry_after=0.2)
    assert limiter.cooldown_remaining() <= 0.2

    async def enter() -> float:
        async with limiter.slot():
            return time.monotonic() - started

    waits = await asyncio.gather(*(enter() for _ in range(3)))
    assert min(waits) >= 0.19


async def test_cooldown_is_capped() -> None:
    limiter = AdaptiveLimiter(4, max_cooldown=0.05)
    async with limiter.slot() as slot:
        slot.rate_limited(retry_after=3600)
    assert limiter.cooldown_remaining() <= 0.05


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    limiter = AdaptiveLimiter(1)
    release = asyncio.Event()

    async def holder() -> None:
        async with limiter.slot():
            await release.wait()

    held = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(holder())
    await asyncio.sleep(0.01)
    waiting.cancel()
    release.set()
    await held
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert limiter.in_flight == 0
    async with limiter.slot():
        assert limiter.in_flight == 1
