"""AIMD concurrency control that backs off under rate limits instead of hammering."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from types import TracebackType

from aieval.errors import ConfigError

__all__ = ["AdaptiveLimiter"]


class AdaptiveLimiter:
    """Caps requests in flight and adapts the cap to the provider's rate limits.

    Additive increase, multiplicative decrease: a 429 halves the allowed concurrency (never
    below 1) and starts a cool-down, shared by every request, that lasts until the server's
    ``Retry-After`` has passed; after a run of successes as long as the current limit, the limit
    grows by one, back up to ``max_concurrency``. Only one halving happens per "window": a 429 for
    a request sent before the last decrease says nothing about the new, lower limit.

    Not thread-safe: use one limiter from one event loop at a time (successive loops are fine).

    Args:
        max_concurrency: the upper bound on requests in flight.
        default_cooldown: cool-down in seconds after a 429 without ``Retry-After``.
        max_cooldown: cap on one cool-down, whatever the server asks for.

    Example:
        >>> limiter = AdaptiveLimiter(8)
        >>> async def call():
        ...     async with limiter.slot() as slot:
        ...         slot.succeeded()
    """

    def __init__(
        self, max_concurrency: int, *, default_cooldown: float = 1.0, max_cooldown: float = 60.0
    ) -> None:
        if max_concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency
        self.default_cooldown = default_cooldown
        self.max_cooldown = max_cooldown
        self._limit = max_concurrency
        self._in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._cooldown_until = 0.0
        self._successes = 0
        self._epoch = 0

    @property
    def limit(self) -> int:
        """The concurrency currently allowed."""
        return self._limit

    @property
    def in_flight(self) -> int:
        """Slots currently held."""
        return self._in_flight

    def cooldown_remaining(self) -> float:
        """Seconds until the shared cool-down ends (0 when none)."""
        return max(0.0, self._cooldown_until - time.monotonic())

    def slot(self) -> _Slot:
        """An async context manager holding one slot; report its outcome on it."""
        return _Slot(self)

    async def _acquire(self) -> int:
        if self._in_flight < self._limit and not self._waiters:
            self._in_flight += 1
        else:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._release()  # the slot was handed over just as we were cancelled
                else:
                    self._waiters.remove(waiter)
                raise
        try:
            await self._wait_cooldown()
        except BaseException:
            self._release()
            raise
        return self._epoch

    async def _wait_cooldown(self) -> None:
        # Loop: a new 429 may extend the cool-down while we sleep.
        while (remaining := self._cooldown_until - time.monotonic()) > 0:
            await asyncio.sleep(remaining)

    def _release(self) -> None:
        self._in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        # Hand freed slots straight to the oldest waiters so newcomers cannot jump the queue.
        while self._waiters and self._in_flight < self._limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)

    def _on_success(self) -> None:
        self._successes += 1
        if self._successes >= self._limit and self._limit < self.max_concurrency:
            self._limit += 1
            self._successes = 0
            self._wake()

    def _on_rate_limit(self, epoch: int, retry_after: float | None, shared: bool = True) -> None:
        self._successes = 0
        if shared:
            wait = self.default_cooldown if retry_after is None else retry_after
            until = time.monotonic() + min(wait, self.max_cooldown)
            self._cooldown_until = max(self._cooldown_until, until)
        if epoch == self._epoch:
            self._limit = max(1, self._limit // 2)
            self._epoch += 1


class _Slot:
    """One held slot of an :class:`AdaptiveLimiter`."""

    __slots__ = ("_epoch", "_limiter")

    def __init__(self, limiter: AdaptiveLimiter) -> None:
        self._limiter = limiter
        self._epoch = -1

    async def __aenter__(self) -> _Slot:
        self._epoch = await self._limiter._acquire()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._limiter._release()

    def succeeded(self) -> None:
        """Record a success (counts towards growing the limit)."""
        self._limiter._on_success()

    def rate_limited(
        self, retry_after: float | None = None, *, first_attempt: bool = False
    ) -> None:
        """Record a 429: halve the limit (once per window) and start the shared cool-down.

        A request's first 429 that carries a ``Retry-After`` (``first_attempt=True``) still
        halves the limit, but starts no shared cool-down: that request waits as told (outside
        its slot) and the others go on. Only a 429 on a retry (the request already waited as
        told) or one without ``Retry-After`` holds everyone back; a cool-down shared on every
        first 429 collapses throughput far below per-request waiting when a server refuses
        each request's first call.
        """
        self._limiter._on_rate_limit(
            self._epoch, retry_after, shared=not (first_attempt and retry_after is not None)
        )
