"""Percentile bootstrap confidence intervals and the Wilson interval for a proportion."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aieval.errors import ConfigError

__all__ = ["ConfidenceInterval", "bootstrap_ci", "wilson_interval"]


@dataclass(slots=True, frozen=True)
class ConfidenceInterval:
    """A point estimate with its interval.

    Attributes:
        estimate: the statistic on the data as given.
        low: lower bound.
        high: upper bound.
        confidence: the interval's coverage, e.g. 0.95.
    """

    estimate: float
    low: float
    high: float
    confidence: float = 0.95

    def to_dict(self) -> dict[str, float]:
        """The interval as plain JSON-ready numbers."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def bootstrap_ci(
    statistic: Callable[..., float],
    *samples: Sequence[Any],
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of ``statistic`` over paired ``samples``.

    Items are resampled with replacement, the same indices for every sequence, so paired
    statistics (kappa, Spearman) keep their pairs. Resamples where the statistic fails are
    dropped.

    Args:
        statistic: called as ``statistic(*resampled)``, returning a float.
        *samples: one or more sequences of equal length.
        confidence: interval coverage in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed, so a report is reproducible; ``None`` for fresh randomness.

    Example:
        >>> ci = bootstrap_ci(lambda x: sum(x) / len(x), [1.0, 2.0, 3.0, 4.0])
        >>> ci.low <= ci.estimate <= ci.high
        True
    """
    if not samples:
        raise ConfigError("bootstrap_ci needs at least one sample")
    n = len(samples[0])
    if n == 0 or any(len(s) != n for s in samples):
        raise ConfigError("bootstrap_ci: samples must be non-empty and of equal length")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"bootstrap_ci: confidence must be in (0, 1), got {confidence!r}")
    estimate = float(statistic(*samples))
    rng = np.random.default_rng(seed)
    values: list[float] = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        try:
            value = float(statistic(*([s[i] for i in idx] for s in samples)))
        except (ConfigError, ZeroDivisionError, ValueError):
            continue
        if math.isfinite(value):
            values.append(value)
    if not values:
        return ConfidenceInterval(estimate, estimate, estimate, confidence)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return ConfidenceInterval(estimate, float(low), float(high), confidence)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a proportion ``successes / n``.

    Example:
        >>> ci = wilson_interval(8, 10)
        >>> round(ci.low, 3), round(ci.high, 3)
        (0.49, 0.943)
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ConfigError(
            f"wilson_interval: need 0 <= successes <= n and n > 0, got {successes}/{n}"
        )
    from scipy.stats import norm

    z = float(norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return ConfidenceInterval(p, max(0.0, centre - half), min(1.0, centre + half), confidence)
