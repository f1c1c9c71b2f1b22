"""Percentile bootstrap confidence intervals and the Wilson interval for a proportion."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from aieval.errors import ConfigError

__all__ = [
    "BLOCK_ENTRIES",
    "ConfidenceInterval",
    "bootstrap_ci",
    "resample_means",
    "wilson_interval",
]

#: Bootstrap index matrices are drawn in blocks of about this many entries (8 bytes each), so
#: memory stays near 32 MB whatever the sample size and resample count.
BLOCK_ENTRIES = 4_000_000

# Statistics recognised as "the mean", resampled in bulk with numpy rather than one by one.
_MEANS: tuple[Callable[..., Any], ...] = (np.mean, statistics.mean, statistics.fmean)


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
    dropped. The mean of one sample (``statistics.mean``, ``statistics.fmean`` or ``np.mean``)
    is resampled in bulk with numpy, fast enough for 100,000 values and 2,000 resamples.

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
    if len(samples) == 1 and statistic in _MEANS:
        data = np.asarray(samples[0], dtype=float)
        if np.all(np.isfinite(data)):
            means = resample_means(data, n_resamples=n_resamples, seed=seed)
            tail = (1.0 - confidence) / 2.0
            low, high = np.quantile(means, [tail, 1.0 - tail])
            return ConfidenceInterval(estimate, float(low), float(high), confidence)
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


def resample_means(
    values: np.ndarray, *, n_resamples: int = 2000, seed: int | None = 0
) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of ``values``, drawn block by block."""
    rng = np.random.default_rng(seed)
    n = values.size
    out = np.empty(n_resamples)
    block = max(1, BLOCK_ENTRIES // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(rows, n))
        out[start : start + rows] = values[idx].mean(axis=1)
    return out


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
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At 0 or n successes the bound is exactly 0 or 1; the formula leaves float dust there.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return ConfidenceInterval(p, low, high, confidence)
