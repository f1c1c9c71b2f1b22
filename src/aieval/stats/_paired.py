"""Paired comparisons: bootstrap interval of a difference, and a one-sided non-inferiority test."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from aieval.errors import ConfigError
from aieval.stats._bootstrap import BLOCK_ENTRIES, ConfidenceInterval, resample_means

__all__ = ["NoninferiorityResult", "noninferiority_test", "paired_bootstrap_ci"]

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
    b = np.asarray(baseline, dtype=float)
    c = np.asarray(candidate, dtype=float)
    if b.shape != c.shape or b.ndim != 1 or b.size == 0:
        raise ConfigError(
            f"paired_bootstrap_ci: baseline and candidate need the same non-zero length, got "
            f"{b.size} and {c.size}"
        )
    _check_confidence(confidence, n_resamples)
    estimate = float(statistic(c) - statistic(b))
    if statistic is np.mean:
        # The mean is linear, so the difference of means is the mean of differences.
        diffs = resample_means(c - b, n_resamples=n_resamples, seed=seed)
    else:
        diffs = _resample_pairs(b, c, statistic, n_resamples, seed)
    return _percentile(estimate, diffs, confidence)


def _resample_pairs(
    b: np.ndarray, c: np.ndarray, statistic: AxisStatistic, n_resamples: int, seed: int | None
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = b.size
    out = np.empty(n_resamples)
    block = max(1, BLOCK_ENTRIES // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(rows, n))
        out[start : start + rows] = statistic(c[idx], axis=1) - statistic(b[idx], axis=1)
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


@dataclass(frozen=True, slots=True)
class NoninferiorityResult:
    """The outcome of :func:`noninferiority_test`.

    Attributes:
        mean_delta: mean of the differences (candidate - baseline).
        lower_bound: one-sided ``1 - alpha`` lower confidence bound of the mean difference.
        p_value: one-sided p-value of H0 ``mean <= -margin``.
        statistic: the t statistic (``None`` when the differences have no spread).
        non_inferior: H0 rejected at ``alpha``: the candidate is worse by less than the margin.
        improved: the lower bound is above 0: the candidate is better, not only not worse.
        n: number of differences.
        margin: the non-inferiority margin, in the differences' units.
        alpha: the one-sided significance level.
        method: ``"paired t-test"`` or ``"no variance"`` (decided by the mean alone).
    """

    mean_delta: float
    lower_bound: float
    p_value: float
    statistic: float | None
    non_inferior: bool
    improved: bool
    n: int
    margin: float
    alpha: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return asdict(self)


def noninferiority_test(
    differences: Sequence[float] | np.ndarray, *, margin: float, alpha: float = 0.05
) -> NoninferiorityResult:
    """One-sided paired t-test that the mean difference exceeds ``-margin``.

    H0: ``mean(d) <= -margin`` (the candidate is worse by at least the margin) against
    H1: ``mean(d) > -margin``. It is ``scipy.stats.ttest_1samp(d + margin, 0,
    alternative="greater")``. When the differences have no spread (or there is only one),
    the t statistic is undefined and the decision is ``mean(d) > -margin``.

    Args:
        differences: per-example ``candidate - baseline``.
        margin: how much worse (in the differences' units) still counts as non-inferior, >= 0.
        alpha: one-sided significance level in (0, 1).

    Example:
        >>> r = noninferiority_test([0.0, 1.0, -1.0, 0.5, -0.5], margin=2.0)
        >>> r.non_inferior, r.improved, round(r.p_value, 4)
        (True, False, 0.0024)
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ConfigError("noninferiority_test: needs at least one finite difference")
    if not margin >= 0.0 or not math.isfinite(margin):
        raise ConfigError(f"noninferiority_test: margin must be a number >= 0, got {margin!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"noninferiority_test: alpha must be in (0, 1), got {alpha!r}")
    n, mean = d.size, float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if sd <= 1e-12 * max(1.0, abs(mean)):
        ok = mean > -margin
        return NoninferiorityResult(
            mean, mean, 0.0 if ok else 1.0, None, ok, mean > 0.0, n, margin, alpha, "no variance"
        )
    # scipy.special's Student t functions import much faster than scipy.stats.
    from scipy.special import stdtr, stdtrit

    se = sd / math.sqrt(n)
    stat = (mean + margin) / se
    p = float(stdtr(n - 1, -stat))
    lower = mean - float(stdtrit(n - 1, 1.0 - alpha)) * se
    return NoninferiorityResult(
        mean, lower, p, stat, p < alpha, lower > 0.0, n, margin, alpha, "paired t-test"
    )
