"""Retries and adaptive concurrency around any provider."""

from __future__ import annotations

import asyncio
import logging
import time

from aieval.errors import ProviderError, RateLimitError
from aieval.providers._base import ChatRequest, ChatResponse, Provider
from aieval.providers._gate import chat_usage, gated
from aieval.providers._limiter import AdaptiveLimiter
from aieval.providers._retry import RetryPolicy
from aieval.providers._wrapper import Wrapper

__all__ = ["ResilientProvider"]

logger = logging.getLogger("aieval.providers")


class ResilientProvider(Wrapper):
    """Wraps a provider with a :class:`RetryPolicy` and an :class:`AdaptiveLimiter`.

    Every attempt holds one limiter slot; the slot is released while waiting to retry, so a
    request backing off does not block others. The returned response's ``retries`` counts the
    failed attempts before it; an error raised after the last retry carries the same count in
    its ``retries`` attribute. A response that needed retries reports as ``latency_s`` the
    time from its first attempt to its answer (back-off waits and hung attempts included), so
    a request that hung until its timeout shows as slow, not as its last quick attempt.

    Under a call gate (:mod:`aieval.providers._gate`) each attempt is reserved before it is
    sent; a refusal (:class:`~aieval.errors.BudgetExhausted`) is final, never retried.

    Args:
        inner: the provider making the actual calls.
        retry: when and how long to wait between attempts.
        max_concurrency: upper bound on calls in flight (the limiter adapts below it).
    """

    #: it passes each attempt through the call gate itself (a wrapper around it does not)
    gates_calls = True

    def __init__(
        self,
        inner: Provider,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 16,
    ) -> None:
        self.inner = inner
        self.retry = retry if retry is not None else RetryPolicy()
        # The shared cool-down follows the same rules as one request's own wait.
        self.limiter = AdaptiveLimiter(
            max_concurrency,
            default_cooldown=self.retry.initial_delay,
            max_cooldown=self.retry.max_retry_after,
        )
        self.name = inner.name

    def __repr__(self) -> str:
        return f"ResilientProvider({self.inner!r}, retry={self.retry!r})"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Call the inner provider, retrying retryable failures per the policy."""
        retries = 0
        started: float | None = None
        while True:
            async with self.limiter.slot() as slot:
                if started is None:
                    started = time.perf_counter()
                try:
                    # each attempt is a call sent: the call gate (if any) reserves it first
                    response = await gated(lambda: self.inner.generate(request), chat_usage)
                except ProviderError as error:
                    if isinstance(error, RateLimitError):
                        slot.rate_limited(error.retry_after, first_attempt=retries == 0)
                    if not self.retry.should_retry(error, retries):
                        error.retries = retries
                        raise
                    delay = self.retry.delay(retries, error)
                    reason = str(error)
                else:
                    slot.succeeded()
                    response.retries += retries
                    if retries:
                        response.latency_s = time.perf_counter() - started
                    return response
            retries += 1
            logger.info(
                "%s: retry %d/%d in %.2f s after: %s",
                self.name,
                retries,
                self.retry.max_retries,
                delay,
                reason,
            )
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        """Close the wrapped provider."""
        await self.inner.aclose()
