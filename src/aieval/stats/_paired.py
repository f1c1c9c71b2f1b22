"""Paired comparisons: the bootstrap interval of a difference between two versions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from aieval.errors import ConfigError
from aieval.stats._bootstrap import ConfidenceInterval
from aieval.stats._resample import resample_means, resample_means_many, resample_rows

__all__ = ["paired_bootstrap_ci", "paired_bootstrap_cis"]

AxisStatistic = Callable[..., Any]


def paired_bootstrap_ci(
    baseline: Sequence[float] | np.ndarray,
    candidate: Sequence[float] | np.ndarray,
    *,
    statistic: AxisStatistic = np.mean,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of ``statistic(candidate) - statistic(baseline)``.

    ``baseline[i]`` and ``candidate[i]`` are the same example, so each resample draws example
    indices once and applies them to both: the interval reflects the spread of per-example
    differences, which is much narrower than two independent intervals when the versions
    agree on most examples.

    Args:
        baseline: per-example values of the baseline.
        candidate: per-example values of the candidate, in the same example order.
        statistic: a numpy reduction accepting ``axis=`` (``np.mean``, ``np.median``).
        confidence: interval coverage in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed; ``None`` for fresh randomness.

    Example:
        >>> ci = paired_bootstrap_ci([0.5, 0.6, 0.7, 0.8], [0.6, 0.7, 0.8, 0.9])
        >>> round(ci.estimate, 6), round(ci.low, 6), round(ci.high, 6)
        (0.1, 0.1, 0.1)
    """
    b, c = _paired(baseline, candidate, "paired_bootstrap_ci")
    _check_confidence(confidence, n_resamples)
    estimate = float(statistic(c) - statistic(b))
    if statistic is np.mean:
        # The mean is linear, so the difference of means is the mean of differences.
        diffs = resample_means(c - b, n_resamples=n_resamples, seed=seed)
    else:
        diffs = _resample_pairs(b, c, statistic, n_resamples, seed)
    return _percentile(estimate, diffs, confidence)


def _paired(
    baseline: Sequence[float] | np.ndarray, candidate: Sequence[float] | np.ndarray, who: str
) -> tuple[np.ndarray, np.ndarray]:
    """Both as float arrays; a :class:`ConfigError` naming ``who`` unless they are flat and of
    one non-zero length."""
    b = np.asarray(baseline, dtype=float)
    c = np.asarray(candidate, dtype=float)
    if b.shape != c.shape or b.ndim != 1 or b.size == 0:
        raise ConfigError(
            f"{who}: baseline and candidate need the same non-zero length, got {b.size} and "
            f"{c.size}"
        )
    return b, c


def paired_bootstrap_cis(
    pairs: Sequence[tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> list[ConfidenceInterval]:
    """Paired bootstrap intervals of the mean difference of several metrics at once.

    Equal, to the last digit, to ``[paired_bootstrap_ci(b, c, ...) for b, c in pairs]`` with
    the same arguments: metrics over the same number of examples share one stream of resample
    indices (drawn once, see :func:`resample_means_many`); others get their own.

    Args:
        pairs: ``(baseline, candidate)`` per metric, each pair of equal non-zero length.
        confidence: interval coverage in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed; ``None`` for fresh randomness.

    Example:
        >>> pairs = [([0.5, 0.7, 0.6], [0.6, 0.8, 0.6]), ([1.0, 0.0], [1.0, 1.0])]
        >>> paired_bootstrap_cis(pairs) == [paired_bootstrap_ci(b, c) for b, c in pairs]
        True
    """
    _check_confidence(confidence, n_resamples)
    diffs: list[np.ndarray] = []
    estimates: list[float] = []
    for j, (baseline, candidate) in enumerate(pairs):
        b, c = _paired(baseline, candidate, f"paired_bootstrap_cis: pair {j}")
        estimates.append(float(np.mean(c) - np.mean(b)))
        diffs.append(c - b)
    by_length: dict[int, list[int]] = {}
    for j, d in enumerate(diffs):
        by_length.setdefault(d.size, []).append(j)
    out: dict[int, ConfidenceInterval] = {}
    for group in by_length.values():
        means = resample_means_many([diffs[j] for j in group], n_resamples=n_resamples, seed=seed)
        for j, row in zip(group, means, strict=True):
            out[j] = _percentile(estimates[j], row, confidence)
    return [out[j] for j in range(len(diffs))]


def _resample_pairs(
    b: np.ndarray, c: np.ndarray, statistic: AxisStatistic, n_resamples: int, seed: int | None
) -> np.ndarray:
    out = np.empty(n_resamples)

    def deltas(idx: np.ndarray, first: int) -> None:
        out[first : first + len(idx)] = statistic(c[idx], axis=1) - statistic(b[idx], axis=1)

    resample_rows(b.size, n_resamples, seed, deltas)
    return out


def _percentile(estimate: float, values: np.ndarray, confidence: float) -> ConfidenceInterval:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return ConfidenceInterval(estimate, estimate, estimate, confidence)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return ConfidenceInterval(estimate, float(low), float(high), confidence)


def _check_confidence(confidence: float, n_resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be >= 1, got {n_resamples!r}")
