"""When and how long to wait before retrying a failed model call."""

from __future__ import annotations

import random
from dataclasses import dataclass

from aieval.errors import ConfigError, ProviderError, RateLimitError

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential back-off with jitter for retryable provider errors.

    Only errors whose ``retryable`` flag is set (429, 5xx, timeouts, connection failures) are
    retried. A 429's ``Retry-After`` is honoured as given, capped at ``max_retry_after`` so a
    server asking for an hour cannot stall a run; otherwise attempt ``n`` (0-based) waits
    ``min(max_delay, initial_delay * multiplier**n)``, scaled by a random factor in [0.5, 1) when
    ``jitter`` is on so that many failed requests do not retry in lock-step.

    Attributes:
        max_retries: retries after the first attempt (0 disables retrying).
        initial_delay: seconds before the first retry.
        max_delay: upper bound of one back-off wait.
        multiplier: growth factor between consecutive waits.
        jitter: randomize waits.
        max_retry_after: upper bound, in seconds, on a server's ``Retry-After``.

    >>> RetryPolicy(jitter=False).delay(2)
    2.0
    """

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: bool = True
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"retries must be >= 0, got {self.max_retries}")
        for field in ("initial_delay", "max_delay", "max_retry_after"):
            if getattr(self, field) < 0:
                raise ConfigError(f"RetryPolicy.{field} must be >= 0, got {getattr(self, field)}")
        if self.multiplier < 1:
            raise ConfigError(f"RetryPolicy.multiplier must be >= 1, got {self.multiplier}")

    def should_retry(self, error: ProviderError, retries_so_far: int) -> bool:
        """Whether to retry after ``error`` when ``retries_so_far`` retries were already made."""
        return error.retryable and retries_so_far < self.max_retries

    def delay(self, attempt: int, error: ProviderError | None = None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after)
        base = min(self.max_delay, self.initial_delay * self.multiplier ** min(attempt, 64))
        return base * random.uniform(0.5, 1.0) if self.jitter else base
