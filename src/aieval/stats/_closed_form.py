"""Closed-form intervals of a mean: Student's t from moments or from sums, and the paired t
interval of a mean difference.

At large n these replace the seeded bootstrap (``docs/reports.md``: at 100,000 samples the two
differ by less than the bootstrap's own seed-to-seed spread) at a fraction of its cost, and
they need only ``n``, a sum and a sum of squares, which a database computes in one query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aieval.errors import ConfigError
from aieval.stats._bootstrap import ConfidenceInterval

__all__ = [
    "moments_from_sums",
    "paired_t_interval",
    "t_interval",
    "t_interval_from_moments",
    "t_interval_from_sums",
]


def t_interval_from_moments(
    n: int, mean: float, sd: float, *, confidence: float = 0.95
) -> ConfidenceInterval:
    """Student's t interval of a mean: ``mean ± t(n-1) * sd / sqrt(n)``.

    ``sd`` is the sample standard deviation (``ddof=1``). With one value, or no spread, the
    interval is the mean alone (there is no spread to estimate).

    Example:
        >>> ci = t_interval_from_moments(4, 2.5, 1.2909944487358056)
        >>> round(ci.low, 4), round(ci.high, 4)
        (0.4457, 4.5543)
    """
    _check(n, confidence)
    if not math.isfinite(mean) or not (math.isfinite(sd) and sd >= 0.0):
        raise ConfigError(f"t interval: mean and sd must be finite, sd >= 0; got {mean}, {sd}")
    if n < 2 or sd == 0.0:
        return ConfidenceInterval(mean, mean, mean, confidence)
    # scipy.special's Student t quantile imports much faster than scipy.stats
    from scipy.special import stdtrit

    half = float(stdtrit(n - 1, 1.0 - (1.0 - confidence) / 2.0)) * sd / math.sqrt(n)
    return ConfidenceInterval(mean, mean - half, mean + half, confidence)


def t_interval_from_sums(
    n: int, total: float, total_sq: float, *, shift: float = 0.0, confidence: float = 0.95
) -> ConfidenceInterval:
    """Student's t interval of a mean from ``n``, the sum and the sum of squares of the values
    less ``shift`` (what one ``SUM(x - shift), SUM((x - shift) * (x - shift))`` query gives).

    The variance is ``(total_sq - total * total / n) / (n - 1)``: the subtraction loses about
    ``log10((m*m + v) / v)`` of float's 16 digits, where ``m`` is the mean of the shifted
    values and ``v`` their variance. For scores in 0..1 or 0..100 with any spread that is a few
    digits at most (bounds exact to ~1e-12 relative); when the mean is far from 0 relative to
    the spread, pass sums of ``x - shift`` with ``shift`` near the mean (any value of the
    data, such as the first) to keep every digit. A variance the rounding makes negative is 0.

    Example:
        >>> a = t_interval_from_sums(4, 10.0, 30.0)
        >>> b = t_interval_from_moments(4, 2.5, 1.2909944487358056)
        >>> abs(a.low - b.low) < 1e-12 and abs(a.high - b.high) < 1e-12
        True
    """
    _check(n, confidence)
    mean, sd = moments_from_sums(n, total, total_sq, shift=shift)
    return t_interval_from_moments(n, mean, sd, confidence=confidence)


def moments_from_sums(
    n: int, total: float, total_sq: float, *, shift: float = 0.0
) -> tuple[float, float]:
    """``(mean, sample sd)`` of ``n`` values from the sum and the sum of squares of the values
    less ``shift`` (see :func:`t_interval_from_sums` for the digits the subtraction loses); the
    sd of one value is 0.

    Example:
        >>> moments_from_sums(4, 10.0, 30.0)
        (2.5, 1.2909944487358056)
    """
    _check(n, 0.5)
    if not (math.isfinite(total) and math.isfinite(total_sq) and math.isfinite(shift)):
        raise ConfigError("t interval: the sums must be finite numbers")
    centred_mean = total / n
    variance = max(total_sq - total * centred_mean, 0.0) / (n - 1) if n > 1 else 0.0
    return centred_mean + shift, math.sqrt(variance)


def t_interval(
    values: Sequence[float] | np.ndarray, *, confidence: float = 0.95
) -> ConfidenceInterval:
    """Student's t interval of the mean of ``values`` (finite numbers, at least one).

    Example:
        >>> ci = t_interval([1.0, 2.0, 3.0, 4.0])
        >>> round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)
        (2.5, 0.4457, 4.5543)
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0 or not np.all(np.isfinite(data)):
        raise ConfigError("t interval: needs at least one finite value")
    sd = float(np.std(data, ddof=1)) if data.size > 1 else 0.0
    return t_interval_from_moments(data.size, float(np.mean(data)), sd, confidence=confidence)


def paired_t_interval(
    baseline: Sequence[float] | np.ndarray,
    candidate: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> ConfidenceInterval:
    """The paired t interval of ``mean(candidate) - mean(baseline)``: Student's t on the
    per-example differences (``baseline[i]`` and ``candidate[i]`` are one example).

    Example:
        >>> ci = paired_t_interval([0.5, 0.6, 0.7, 0.8], [0.6, 0.8, 0.8, 0.9])
        >>> round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)
        (0.125, 0.0454, 0.2046)
    """
    b = np.asarray(baseline, dtype=float)
    c = np.asarray(candidate, dtype=float)
    if b.shape != c.shape or b.ndim != 1 or b.size == 0:
        raise ConfigError(
            f"paired t interval: baseline and candidate need the same non-zero length, got "
            f"{b.size} and {c.size}"
        )
    d = c - b
    ci = t_interval(d, confidence=confidence)
    # the estimate as the bootstrap path states it: the difference of the two means
    estimate = float(np.mean(c) - np.mean(b))
    return ConfidenceInterval(estimate, ci.low, ci.high, confidence)


def _check(n: int, confidence: float) -> None:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ConfigError(f"t interval: n must be a whole number >= 1, got {n!r}")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"t interval: confidence must be in (0, 1), got {confidence!r}")
