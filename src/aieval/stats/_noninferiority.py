"""One-sided non-inferiority tests of paired differences, and what the data could have shown.

Three methods, chosen by simulation (``bench/promotion.py``, results in ``docs/reports.md``):

- ``"t"``: the one-sided paired t-test (``scipy.stats.ttest_1samp(d + margin, 0,
  alternative="greater")``). Exact for Gaussian differences, anti-conservative when a few
  examples regress a lot.
- ``"bootstrap-t"``: the studentized (bootstrap-t) bound: resample the differences, studentize
  each resampled mean by its own standard error, and use the quantile of those t values in place
  of Student's. It corrects for skewed and sparse differences.
- ``"proportion"``: for 0/1 outcomes, Tango's score bound for a difference of paired proportions
  (McNemar's discordant pairs, with the nuisance rate at its restricted maximum likelihood).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

from aieval.errors import ConfigError
from aieval.stats._resample import resample_rows

__all__ = [
    "NoninferiorityMethod",
    "NoninferiorityResult",
    "noninferiority_from_counts",
    "noninferiority_from_moments",
    "noninferiority_test",
]

NoninferiorityMethod = Literal["t", "bootstrap-t", "proportion"]

#: Power of the sample-size hints: the n they give shows non-inferiority four times out of five.
PLANNING_POWER = 0.8

_METHOD_NAMES = {
    "t": "paired t-test",
    "bootstrap-t": "studentized bootstrap",
    "proportion": "paired-proportion score test",
}


@dataclass(frozen=True, slots=True)
class NoninferiorityResult:
    """The outcome of :func:`noninferiority_test`.

    Attributes:
        mean_delta: mean of the differences (candidate - baseline).
        lower_bound: one-sided ``1 - alpha`` lower confidence bound of the mean difference.
        p_value: one-sided p-value of H0 ``mean <= -margin``.
        statistic: the test statistic (``None`` when the differences have no spread).
        non_inferior: H0 rejected at ``alpha``: the candidate is worse by less than the margin.
        improved: the lower bound is above 0: the candidate is better, not only not worse.
        n: number of differences.
        margin: the non-inferiority margin, in the differences' units.
        alpha: the one-sided significance level.
        method: ``"paired t-test"``, ``"studentized bootstrap"``, ``"paired-proportion score
            test"`` or ``"no variance"`` (decided by the mean alone).
        upper_bound: one-sided ``1 - alpha`` upper confidence bound of the mean difference.
        regressed: the upper bound is below ``-margin``: worse than the margin, shown.
        min_margin: the smallest margin this data shows non-inferiority at (``max(0, -lower)``).
        sd_delta: sample standard deviation of the differences (``ddof=1``; 0 for one).
        examples_needed_at_observed_difference: roughly how many differences would show
            non-inferiority at ``margin`` with :data:`PLANNING_POWER` if the observed mean
            difference and spread hold: ``ceil(((z(1-alpha) + z(power)) * sd_delta /
            (mean_delta + margin))**2)``, at least 2; for 0/1 outcomes the n at which Tango's
            statistic at the observed win and loss shares reaches ``z(1-alpha) + z(power)``.
            ``None`` when the observed mean is at or beyond ``-margin`` (more such data would
            show a regression, not non-inferiority) or there is no spread to plan with.
        examples_needed_if_equal: the same for a candidate only as good as the baseline (mean
            difference 0) with the observed spread (for 0/1 outcomes: the observed share of
            discordant pairs, split evenly): ``ceil(((z(1-alpha) + z(power)) * sd_delta /
            margin)**2)``. ``None`` with a zero margin and in the cases above.
        planning_power: the power both sample sizes are planned for.
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
    upper_bound: float = math.inf
    regressed: bool = False
    min_margin: float = 0.0
    sd_delta: float = 0.0
    examples_needed_at_observed_difference: int | None = None
    examples_needed_if_equal: int | None = None
    planning_power: float = PLANNING_POWER

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return asdict(self)


def noninferiority_test(
    differences: Sequence[float] | np.ndarray,
    *,
    margin: float,
    alpha: float = 0.05,
    method: NoninferiorityMethod = "t",
    scale: float = 1.0,
    n_resamples: int = 4000,
    seed: int | None = 0,
) -> NoninferiorityResult:
    """One-sided test that the mean paired difference exceeds ``-margin``.

    H0: ``mean(d) <= -margin`` (the candidate is worse by at least the margin) against
    H1: ``mean(d) > -margin``. When the differences have no spread (or there is only one) and
    the method is not ``"proportion"``, the decision is ``mean(d) > -margin``.

    Args:
        differences: per-example ``candidate - baseline``.
        margin: how much worse (in the differences' units) still counts as non-inferior, >= 0.
        alpha: one-sided significance level in (0, 1).
        method: ``"t"`` (paired t-test), ``"bootstrap-t"`` (studentized bootstrap) or
            ``"proportion"`` (0/1 outcomes: every difference is ``-scale``, 0 or ``scale``).
        scale: the value of one whole unit for ``"proportion"`` (100 for 0..100 scores).
        n_resamples: bootstrap resamples for ``"bootstrap-t"``.
        seed: bootstrap seed, so a decision is reproducible.

    Example:
        >>> r = noninferiority_test([0.0, 1.0, -1.0, 0.5, -0.5], margin=2.0)
        >>> r.non_inferior, r.improved, round(r.p_value, 4)
        (True, False, 0.0024)
    """
    d = _check(differences, margin, alpha, method, scale, n_resamples)
    n, mean = d.size, float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if method == "proportion":
        return _proportion(d / scale, margin / scale, alpha, scale)
    if method == "t" or _no_spread(mean, sd):
        return _t_test(n, mean, sd, margin, alpha)
    stat = (mean + margin) / (sd / math.sqrt(n))
    lower, upper, p = _bootstrap_t(d, stat, alpha, n_resamples, seed)
    return NoninferiorityResult(
        mean, lower, p, stat, lower > -margin, lower > 0.0, n, margin, alpha,
        _METHOD_NAMES[method], upper, upper < -margin, max(0.0, -lower), sd,
        *_n_normal(mean, sd, margin, alpha),
    )  # fmt: skip


def _no_spread(mean: float, sd: float) -> bool:
    """The differences have no spread to test with: decided by the mean alone."""
    return sd <= 1e-12 * max(1.0, abs(mean))


def _t_test(n: int, mean: float, sd: float, margin: float, alpha: float) -> NoninferiorityResult:
    """The one-sided paired t-test from the differences' count, mean and sd (``ddof=1``); by
    the mean alone when they have no spread."""
    if _no_spread(mean, sd):
        ok = mean > -margin
        return NoninferiorityResult(
            mean, mean, 0.0 if ok else 1.0, None, ok, mean > 0.0, n, margin, alpha,
            "no variance", mean, mean < -margin and n > 1, max(0.0, -mean), sd,
        )  # fmt: skip
    # scipy.special's Student t functions import much faster than scipy.stats.
    from scipy.special import stdtr, stdtrit

    se = sd / math.sqrt(n)
    stat = (mean + margin) / se
    q = float(stdtrit(n - 1, 1.0 - alpha))
    p, lower, upper = float(stdtr(n - 1, -stat)), mean - q * se, mean + q * se
    return NoninferiorityResult(
        mean, lower, p, stat, lower > -margin, lower > 0.0, n, margin, alpha,
        _METHOD_NAMES["t"], upper, upper < -margin, max(0.0, -lower), sd,
        *_n_normal(mean, sd, margin, alpha),
    )  # fmt: skip


def noninferiority_from_moments(
    n: int, mean: float, sd: float, *, margin: float, alpha: float = 0.05
) -> NoninferiorityResult:
    """The paired t-test of :func:`noninferiority_test` (``method="t"``) from the differences'
    count, mean and sample sd (``ddof=1``): what sums in a database give, without the values.

    Example:
        >>> a = noninferiority_from_moments(5, 0.0, 0.7905694150420949, margin=2.0)
        >>> b = noninferiority_test([0.0, 1.0, -1.0, 0.5, -0.5], margin=2.0)
        >>> abs(a.p_value - b.p_value) < 1e-12, a.method
        (True, 'paired t-test')
    """
    _check_moments(n, mean, sd, margin, alpha)
    return _t_test(n, mean, sd, margin, alpha)


def noninferiority_from_counts(
    wins: int, losses: int, n: int, *, margin: float, alpha: float = 0.05, scale: float = 1.0
) -> NoninferiorityResult:
    """Tango's paired-proportion test of :func:`noninferiority_test` (``method="proportion"``)
    from ``n`` paired 0/1 outcomes of which the candidate alone passed ``wins`` and the baseline
    alone ``losses`` (McNemar's table, as a database counts it); ``margin`` in ``scale`` units.

    Example:
        >>> a = noninferiority_from_counts(1, 1, 4, margin=0.5)
        >>> b = noninferiority_test([1.0, -1.0, 0.0, 0.0], margin=0.5, method="proportion")
        >>> abs(a.lower_bound - b.lower_bound) < 1e-12
        True
    """
    if min(wins, losses) < 0 or wins + losses > n or n < 1:
        raise ConfigError(
            f"noninferiority_from_counts: needs 0 <= wins + losses <= n, n >= 1; got {wins}, "
            f"{losses}, {n}"
        )
    _check_moments(n, 0.0, 0.0, margin, alpha)
    if not scale > 0.0 or not math.isfinite(scale):
        raise ConfigError(f"noninferiority_test: scale must be > 0, got {scale!r}")
    mean = (wins - losses) / n
    # the sample variance of n values of +1, -1 and 0 with this mean
    sd = math.sqrt(max(wins + losses - n * mean * mean, 0.0) / (n - 1)) if n > 1 else 0.0
    return _tango(float(wins), float(losses), n, mean, sd, margin / scale, alpha, scale)


def _check_moments(n: int, mean: float, sd: float, margin: float, alpha: float) -> None:
    if n < 1 or not math.isfinite(mean) or not (math.isfinite(sd) and sd >= 0.0):
        raise ConfigError(
            f"noninferiority_test: needs n >= 1, a finite mean and sd >= 0; got {n}, {mean}, {sd}"
        )
    if not margin >= 0.0 or not math.isfinite(margin):
        raise ConfigError(f"noninferiority_test: margin must be a number >= 0, got {margin!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"noninferiority_test: alpha must be in (0, 1), got {alpha!r}")


def _check(
    differences: Sequence[float] | np.ndarray,
    margin: float,
    alpha: float,
    method: str,
    scale: float,
    n_resamples: int,
) -> np.ndarray:
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ConfigError("noninferiority_test: needs at least one finite difference")
    if not margin >= 0.0 or not math.isfinite(margin):
        raise ConfigError(f"noninferiority_test: margin must be a number >= 0, got {margin!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"noninferiority_test: alpha must be in (0, 1), got {alpha!r}")
    if method not in _METHOD_NAMES:
        raise ConfigError(
            f"noninferiority_test: method must be one of {', '.join(_METHOD_NAMES)}, got {method!r}"
        )
    if n_resamples < 99:
        raise ConfigError(f"noninferiority_test: n_resamples must be >= 99, got {n_resamples!r}")
    if method == "proportion":
        if not scale > 0.0 or not math.isfinite(scale):
            raise ConfigError(f"noninferiority_test: scale must be > 0, got {scale!r}")
        if not np.all(np.isin(d / scale, (-1.0, 0.0, 1.0))):
            raise ConfigError(
                f"noninferiority_test: method='proportion' needs differences of -{scale:g}, 0 "
                f"or {scale:g} (0/1 outcomes); use method='bootstrap-t' for other scores"
            )
    return d


def _n_normal(mean: float, sd: float, margin: float, alpha: float) -> tuple[int | None, int | None]:
    """``(at the observed difference, if equal)``: the normal-approximation sample sizes."""
    if mean <= -margin:  # more data with this mean would show a regression
        return None, None
    z = _z_sum(alpha)

    def n_for(shift: float) -> int | None:
        if shift <= 0.0:
            return None
        ratio = z * sd / shift
        return max(2, math.ceil(ratio * ratio)) if ratio < 1e7 else None

    return n_for(mean + margin), n_for(margin)


def _z_sum(alpha: float) -> float:
    return NormalDist().inv_cdf(1.0 - alpha) + NormalDist().inv_cdf(PLANNING_POWER)


def _bootstrap_t(
    d: np.ndarray, stat: float, alpha: float, n_resamples: int, seed: int | None
) -> tuple[float, float, float]:
    """Studentized bootstrap ``(lower, upper, p)`` of the mean of ``d``."""
    n = d.size
    centred = d - d.mean()
    se = float(centred.std(ddof=1)) / math.sqrt(n)
    t = np.empty(n_resamples)

    def studentized(idx: np.ndarray, first: int) -> None:
        x = np.take(centred, idx)
        s1 = x.sum(axis=1)
        var = np.maximum((np.einsum("ij,ij->i", x, x) - s1 * s1 / n) / (n - 1), 0.0)
        t[first : first + len(idx)] = _ratio(s1 / n, np.sqrt(var / n))

    resample_rows(n, n_resamples, seed, studentized)
    t.sort()
    hi = t[min(n_resamples - 1, math.ceil((n_resamples + 1) * (1.0 - alpha)) - 1)]
    lo = t[max(0, math.floor((n_resamples + 1) * alpha) - 1)]
    mean = float(d.mean())
    # An infinite t quantile (resamples with no spread) says nothing: clamp to the data's range.
    lower = max(float(d.min()), mean - float(hi) * se)
    upper = min(float(d.max()), mean - float(lo) * se)
    p = (1 + int(np.count_nonzero(t >= stat))) / (n_resamples + 1)
    return lower, upper, p


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros_like(num)
    spread = den > 0
    out[spread] = num[spread] / den[spread]
    out[~spread & (num != 0)] = np.copysign(np.inf, num[~spread & (num != 0)])
    return out


def _proportion(d: np.ndarray, margin: float, alpha: float, scale: float) -> NoninferiorityResult:
    """Tango's score test on paired 0/1 outcomes, in proportion units, reported x ``scale``."""
    n = d.size
    wins, losses = float(np.count_nonzero(d > 0)), float(np.count_nonzero(d < 0))
    sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
    return _tango(wins, losses, n, float(d.mean()), sd, margin, alpha, scale)


def _tango(
    wins: float,
    losses: float,
    n: int,
    mean: float,
    sd: float,
    margin: float,
    alpha: float,
    scale: float,
) -> NoninferiorityResult:
    """Tango's test of ``n`` outcomes with these wins and losses, their mean and sd given."""
    z = NormalDist().inv_cdf(1.0 - alpha)
    stat = tango_z(wins, losses, n, -margin)
    lower = _root(lambda x: tango_z(wins, losses, n, x) - z, -1.0, (wins - losses) / n)
    upper = _root(lambda x: tango_z(wins, losses, n, x) + z, (wins - losses) / n, 1.0)
    p = 1.0 - NormalDist().cdf(stat) if math.isfinite(stat) else float(stat < 0)
    return NoninferiorityResult(
        mean * scale, lower * scale, p, stat, stat > z, lower > 0.0, n,
        margin * scale, alpha, _METHOD_NAMES["proportion"], upper * scale, upper < -margin,
        max(0.0, -lower) * scale, sd * scale,
        *(
            (_n_proportion(wins / n, losses / n, margin, alpha),
             _n_proportion((wins + losses) / (2 * n), (wins + losses) / (2 * n), margin, alpha))
            if (wins - losses) / n > -margin  # else more such data would show a regression
            else (None, None)
        ),
    )  # fmt: skip


def tango_z(wins: float, losses: float, n: float, delta: float) -> float:
    """Tango's score statistic for H0 ``p(win) - p(loss) = delta`` over ``n`` paired 0/1
    outcomes, where a win is 1 for the candidate and 0 for the baseline."""
    a = 2.0 * n
    b = -wins - losses + (2.0 * n - wins + losses) * delta
    c = -losses * delta * (1.0 - delta)
    p_loss = (math.sqrt(max(b * b - 4.0 * a * c, 0.0)) - b) / (2.0 * a)
    var = n * (2.0 * p_loss + delta * (1.0 - delta))
    num = wins - losses - n * delta
    if var <= 1e-15 * n:
        return 0.0 if abs(num) < 1e-12 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a decreasing ``f`` on ``[lo, hi]``, or the end it stays beyond."""
    from scipy.optimize import brentq

    eps = 1e-12
    a, b = lo + eps, hi - eps if hi - lo > 2 * eps else hi
    fa, fb = f(a), f(b)
    if fa <= 0.0:
        return lo
    if fb >= 0.0:
        return hi
    return float(brentq(f, a, b, xtol=1e-10))


def _n_proportion(p_win: float, p_loss: float, margin: float, alpha: float) -> int | None:
    """The n at which win and loss shares ``p_win`` and ``p_loss`` give Tango's statistic the
    planning power (``None`` when no n does)."""
    if p_win - p_loss + margin <= 0.0:
        return None
    z = _z_sum(alpha)

    def short(n: float) -> bool:
        return tango_z(p_win * n, p_loss * n, n, -margin) < z

    hi = 2.0
    while short(hi):
        hi *= 2.0
        if hi > 1e12:
            return None
    lo = hi / 2.0
    while hi - lo > 0.5:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if short(mid) else (lo, mid)
    return max(2, math.ceil(hi))
