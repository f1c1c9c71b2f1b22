"""Intervals of a difference between two independent samples (no pairing): Newcombe's
hybrid score interval of two proportions, from Wilson intervals, and Welch's t interval of
two means. Used where the samples hold different items, such as two windows of online
scoring (different traces)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from aieval.stats._bootstrap import ConfidenceInterval, wilson_interval

__all__ = ["newcombe_interval", "welch_interval"]


def newcombe_interval(
    successes_a: int, n_a: int, successes_b: int, n_b: int, *, confidence: float = 0.95
) -> ConfidenceInterval:
    """Newcombe's hybrid score interval (his method 10) of ``p_b - p_a``, from each side's
    Wilson interval at ``confidence``.

    Example:
        >>> ci = newcombe_interval(56, 70, 48, 80)
        >>> round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)
        (-0.2, -0.3339, -0.0524)
    """
    a = wilson_interval(successes_a, n_a, confidence=confidence)
    b = wilson_interval(successes_b, n_b, confidence=confidence)
    diff = b.estimate - a.estimate
    low = diff - math.hypot(b.estimate - b.low, a.high - a.estimate)
    high = diff + math.hypot(b.high - b.estimate, a.estimate - a.low)
    return ConfidenceInterval(diff, low, high, confidence)


def welch_interval(
    a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95
) -> ConfidenceInterval | None:
    """Welch's t interval of ``mean(b) - mean(a)`` (unequal variances, Welch-Satterthwaite
    degrees of freedom); ``None`` when a side has fewer than two values (no spread to
    estimate). With no spread on either side the interval is the difference alone."""
    n_a, n_b = len(a), len(b)
    if n_a < 2 or n_b < 2:
        return None
    mean_a, mean_b = math.fsum(a) / n_a, math.fsum(b) / n_b
    var_a = math.fsum((x - mean_a) ** 2 for x in a) / (n_a - 1)
    var_b = math.fsum((x - mean_b) ** 2 for x in b) / (n_b - 1)
    diff = mean_b - mean_a
    share_a, share_b = var_a / n_a, var_b / n_b
    se2 = share_a + share_b
    if se2 == 0.0:
        return ConfidenceInterval(diff, diff, diff, confidence)
    df = se2 * se2 / (share_a * share_a / (n_a - 1) + share_b * share_b / (n_b - 1))
    # scipy.special's Student t quantile imports much faster than scipy.stats
    from scipy.special import stdtrit

    half = float(stdtrit(df, 1.0 - (1.0 - confidence) / 2.0)) * math.sqrt(se2)
    return ConfidenceInterval(diff, diff - half, diff + half, confidence)
