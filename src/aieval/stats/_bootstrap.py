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
from aieval.stats._resample import resample_means, resample_means_many

__all__ = [
    "ConfidenceInterval",
    "bootstrap_ci",
    "bootstrap_mean_cis",
    "wilson_interval",
]

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


def bootstrap_mean_cis(
    columns: Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> list[ConfidenceInterval]:
    """Percentile bootstrap intervals of the mean of each column, sharing the resampling work.

    Equal, to the last digit, to ``[bootstrap_ci(np.mean, c, ...) for c in columns]`` with the
    same arguments: with one seed, columns of the same length see the same resample indices, so
    those are drawn once for all of them (columns of another length get their own stream).

    Args:
        columns: non-empty sequences of numbers, of any lengths.
        confidence: interval coverage in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed; ``None`` for fresh randomness.

    Example:
        >>> a, b = bootstrap_mean_cis([[1.0, 2.0, 3.0], [0.5, 0.5, 1.0]])
        >>> a == bootstrap_ci(np.mean, [1.0, 2.0, 3.0])
        True
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"bootstrap_ci: confidence must be in (0, 1), got {confidence!r}")
    out: list[ConfidenceInterval | None] = [None] * len(columns)
    by_length: dict[int, list[int]] = {}
    for j, column in enumerate(columns):
        data = np.asarray(column, dtype=float)
        if data.ndim == 1 and data.size and np.all(np.isfinite(data)):
            by_length.setdefault(data.size, []).append(j)
        else:  # not finite, or not a sample at all: bootstrap_ci's own path or error
            out[j] = bootstrap_ci(
                np.mean, column, confidence=confidence, n_resamples=n_resamples, seed=seed
            )
    tail = (1.0 - confidence) / 2.0
    for group in by_length.values():
        means = resample_means_many(
            [np.asarray(columns[j], dtype=float) for j in group],
            n_resamples=n_resamples,
            seed=seed,
        )
        for j, row in zip(group, means, strict=True):
            low, high = np.quantile(row, [tail, 1.0 - tail])
            out[j] = ConfidenceInterval(
                float(np.mean(columns[j])), float(low), float(high), confidence
            )
    return [ci for ci in out if ci is not None]


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
