"""A judge against human labels on pass/fail: kappa with its analytic interval, Fleiss' kappa for
several raters, and the Rogan-Gladen pass rate corrected for the judge's errors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from aieval.errors import ConfigError
from aieval.stats._bootstrap import ConfidenceInterval

__all__ = [
    "CorrectedRate",
    "ErrorRates",
    "correct_pass_rate",
    "fleiss_kappa",
    "kappa_interval",
    "rogan_gladen",
]


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def kappa_interval(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    confidence: float = 0.95,
    method: Literal["bootstrap", "analytic"] = "bootstrap",
    n_resamples: int = 2000,
    seed: int = 0,
) -> ConfidenceInterval:
    """Cohen's kappa of two raters' pass/fail with its interval.

    ``bootstrap`` (the default) is the percentile interval over items resampled with
    replacement (drawn as the 2x2 table's counts, which is the same thing), seeded.
    ``analytic`` is ``kappa ± z·se`` with the non-null standard error of Fleiss, Cohen and
    Everitt (1969), clipped to [-1, 1]. The simulation in ``bench/judge_correction.py`` chose
    the bootstrap: on 100 labels the analytic interval covered the true kappa in as few as 92%
    of runs, the bootstrap in at least 93% (docs/certify.md). A resample, or the data, where
    both raters give one same label has kappa 0 (undefined); for the data the interval is then
    [-1, 1].

    At the boundary, where a cell of the 2x2 table is empty (no disagreement of one kind, or
    none at all) or the interval has no width, every resample (and the plain standard error)
    agrees with the data and the interval would shrink to a point. It is then widened to the
    analytic interval of the table with ``z²/8`` added to each cell (``z²/2`` in all, as
    Agresti-Coull adds to a proportion): perfect agreement on 112 items with 17 negatives has
    a lower bound of 0.905, not 1.

    Example:
        >>> a = [True] * 40 + [False] * 60
        >>> b = [True] * 28 + [False] * 12 + [True] * 12 + [False] * 48
        >>> ci = kappa_interval(a, b, method="analytic")
        >>> round(ci.estimate, 3), round(ci.low, 3), round(ci.high, 3)
        (0.5, 0.327, 0.673)
        >>> a, b = [True, True, False, False] * 25, [True, False, False, False] * 25
        >>> round(kappa_interval(a, b, method="analytic").low, 3)  # an empty cell: widened
        0.343
    """
    if len(a) != len(b) or not a:
        raise ConfigError(
            f"kappa_interval: the two raters have {len(a)} and {len(b)} labels; pair them"
        )
    table = np.zeros(4)
    for x, y in zip(a, b, strict=True):
        table[2 * int(bool(x)) + int(bool(y))] += 1
    n = int(table.sum())
    kappa = float(_kappas(table[None, :])[0])
    p = table.reshape(2, 2) / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    chance = float(rows @ cols)
    if chance >= 1.0:
        return ConfidenceInterval(0.0, -1.0, 1.0, confidence)
    z = _z(confidence)
    if method == "bootstrap":
        low, high = percentile_bootstrap(table, confidence, n_resamples, seed)
    elif method == "analytic":
        diag = sum(p[i, i] * (1.0 - (rows[i] + cols[i]) * (1.0 - kappa)) ** 2 for i in range(2))
        off = (1.0 - kappa) ** 2 * sum(
            p[i, j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j
        )
        var = (diag + off - (kappa - chance * (1.0 - kappa)) ** 2) / (n * (1.0 - chance) ** 2)
        half = z * math.sqrt(max(var, 0.0))
        low, high = max(-1.0, kappa - half), min(1.0, kappa + half)
    else:
        raise ConfigError(f"kappa_interval: method must be bootstrap or analytic, not {method!r}")
    cells = [float(c) for c in table]
    if min(cells) > 0 and high > low:
        return ConfidenceInterval(kappa, low, high, confidence)
    # At the boundary every resample agrees as the data does: widen to the adjusted table's
    # analytic interval, so perfect agreement on few items is not read as certainty.
    wide_low, wide_high = _adjusted_kappa_bounds(cells, z)
    return ConfidenceInterval(kappa, min(low, wide_low), max(high, wide_high), confidence)


def percentile_bootstrap(
    table: np.ndarray, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    """The plain percentile bootstrap of kappa over 2x2 counts ``[n00, n01, n10, n11]`` (items
    resampled as the table's counts), never widened: kept apart for the simulations."""
    n = int(table.sum())
    rng = np.random.default_rng(seed)
    resampled = _kappas(rng.multinomial(n, table / n, n_resamples).astype(float))
    tail = (1.0 - confidence) / 2.0
    quantiles = np.quantile(resampled, [tail, 1.0 - tail])
    return float(quantiles[0]), float(quantiles[1])


def _adjusted_kappa_bounds(cells: Sequence[float], z: float) -> tuple[float, float]:
    """The analytic kappa interval of 2x2 counts ``[n00, n01, n10, n11]`` with ``z²/8`` added
    to each cell: the width kept at the boundary (an empty cell)."""
    return _analytic([c + z * z / 8.0 for c in cells], z)


def _analytic(cells: Sequence[float], z: float) -> tuple[float, float]:
    """``kappa ± z·se`` of 2x2 counts ``[n00, n01, n10, n11]`` (Fleiss, Cohen and Everitt
    1969), clipped to [-1, 1]."""
    n = sum(cells)
    p = [[cells[0] / n, cells[1] / n], [cells[2] / n, cells[3] / n]]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    chance = rows[0] * cols[0] + rows[1] * cols[1]
    kappa = (p[0][0] + p[1][1] - chance) / (1.0 - chance)
    diag = sum(p[i][i] * (1.0 - (rows[i] + cols[i]) * (1.0 - kappa)) ** 2 for i in range(2))
    off = (1.0 - kappa) ** 2 * (
        p[0][1] * (cols[0] + rows[1]) ** 2 + p[1][0] * (cols[1] + rows[0]) ** 2
    )
    var = (diag + off - (kappa - chance * (1.0 - kappa)) ** 2) / (n * (1.0 - chance) ** 2)
    half = z * math.sqrt(max(var, 0.0))
    return max(-1.0, kappa - half), min(1.0, kappa + half)


def _kappas(cells: np.ndarray) -> np.ndarray:
    """Kappa of each row of 2x2 counts ``[n00, n01, n10, n11]``; 0 where it is undefined."""
    p = cells / cells.sum(axis=1, keepdims=True)
    agree = p[:, 0] + p[:, 3]
    first, second = p[:, 2] + p[:, 3], p[:, 1] + p[:, 3]
    chance = first * second + (1.0 - first) * (1.0 - second)
    safe = np.where(chance < 1.0, 1.0 - chance, 1.0)
    out: np.ndarray = np.where(chance < 1.0, (agree - chance) / safe, 0.0)
    return out


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa: agreement of several raters, each item rated by two or more of them.

    ``counts[i][j]`` is how many raters put item ``i`` in category ``j``. Items may have
    different numbers of raters: each item's agreement is the share of its rater pairs that
    agree, and chance is from the pooled category shares. With two raters per item this is
    Scott's pi. Returns 0 when every rating falls in one category (kappa undefined).

    Example:
        >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1], [2, 0]]), 3)
        0.467
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ConfigError("fleiss_kappa: give one row of category counts per item")
    raters = table.sum(axis=1)
    if np.any(raters < 2):
        raise ConfigError("fleiss_kappa: every item needs at least two ratings")
    agree = ((table * (table - 1)).sum(axis=1) / (raters * (raters - 1))).mean()
    shares = table.sum(axis=0) / table.sum()
    chance = float((shares**2).sum())
    if chance >= 1.0:
        return 0.0
    return float((agree - chance) / (1.0 - chance))


@dataclass(frozen=True, slots=True)
class CorrectedRate:
    """A pass rate corrected for the judge's errors (Rogan-Gladen), with its interval.

    Attributes:
        raw: the judge's pass rate, ``judged_pass / n``.
        raw_interval: Wilson interval of ``raw`` (ignores the judge's errors).
        corrected: ``(raw + tnr - 1) / (tpr + tnr - 1)`` clipped to [0, 1].
        low / high: the interval of the corrected rate (see :func:`rogan_gladen`).
        clipped: the unclipped estimate fell outside [0, 1] and was clipped.
        tpr / tnr: the judge's sensitivity and specificity on the labelled items.
        n: samples the judge graded; positives / negatives: human-pass and human-fail labels.
        confidence: the interval's coverage.
        weighted: ``tpr`` and ``tnr`` (and the interval) are design-weighted by the review
            queues the labels came from (see :class:`ErrorRates`).
        unweighted: why they are the labelled items' own counts instead, else ``None``.
    """

    raw: float
    raw_interval: ConfidenceInterval
    corrected: float
    low: float
    high: float
    clipped: bool
    tpr: float
    tnr: float
    n: int
    positives: int
    negatives: int
    confidence: float = 0.95
    weighted: bool = False
    unweighted: str | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready numbers."""
        return {
            "raw": self.raw,
            "raw_interval": self.raw_interval.to_dict(),
            "corrected": self.corrected,
            "low": self.low,
            "high": self.high,
            "clipped": self.clipped,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "n": self.n,
            "positives": self.positives,
            "negatives": self.negatives,
            "weighted": self.weighted,
            "unweighted": self.unweighted,
        }


@dataclass(frozen=True, slots=True)
class ErrorRates:
    """A judge's sensitivity (TPR, q1) and specificity (TNR, q0) as a correction uses them.

    From counts (:meth:`from_counts`), the interval takes the adjusted rates ``(k+1)/(m+2)``
    and their binomial variances. From a stratified review queue, ``tpr`` and ``tnr`` are the
    design-weighted estimates and ``covariance`` holds their delta-method variances and
    covariance ``(var_tpr, var_tnr, cov)`` (:attr:`WeightedAgreement.rates_cov`): both rates
    come from the same strata, so they are not independent.

    Attributes:
        tpr / tnr: the point estimates.
        true_pos / positives / true_neg / negatives: the labelled items behind them (the
            fewest-labels rule reads these, weighted or not).
        covariance: ``(var_tpr, var_tnr, cov)`` when weighted, else ``None``.
        weighted: the rates are design-weighted (also when the design is self-weighting and
            the counts are the weighted figures).
        unweighted: why they are not, else ``None``.
    """

    tpr: float
    tnr: float
    true_pos: int
    positives: int
    true_neg: int
    negatives: int
    covariance: tuple[float, float, float] | None = None
    weighted: bool = False
    unweighted: str | None = None

    @classmethod
    def from_counts(
        cls,
        true_pos: int,
        positives: int,
        true_neg: int,
        negatives: int,
        *,
        weighted: bool = False,
        unweighted: str | None = None,
    ) -> ErrorRates:
        """Rates from the labelled items' counts (no design, or a self-weighting one)."""
        tpr = true_pos / positives if positives else 0.0
        tnr = true_neg / negatives if negatives else 0.0
        return cls(tpr, tnr, true_pos, positives, true_neg, negatives, None, weighted, unweighted)

    @property
    def youden(self) -> float:
        """``TPR + TNR - 1``: 0 for a judge no better than chance."""
        return self.tpr + self.tnr - 1.0

    def youden_variance(self) -> float:
        """The variance of ``TPR + TNR - 1``: the adjusted binomial variances from counts, or
        ``var_tpr + var_tnr + 2 cov`` when weighted."""
        if self.covariance is not None:
            var1, var0, cov = self.covariance
            return var1 + var0 + 2.0 * cov
        m1, m0 = self.positives, self.negatives
        q1, q0 = (self.true_pos + 1) / (m1 + 2), (self.true_neg + 1) / (m0 + 2)
        return q1 * (1 - q1) / (m1 + 2) + q0 * (1 - q0) / (m0 + 2)


# Fewer labels on either side and the judge's error rates are guesses, not estimates.
MIN_LABELS_PER_CLASS = 10


def rogan_gladen(
    judged_pass: int,
    n: int,
    *,
    true_pos: int,
    positives: int,
    true_neg: int,
    negatives: int,
    confidence: float = 0.95,
    min_per_class: int = MIN_LABELS_PER_CLASS,
) -> CorrectedRate:
    """The judge's pass rate corrected for its sensitivity and specificity, with an interval.

    ``theta = (p + tnr - 1) / (tpr + tnr - 1)`` (arXiv 2511.21140 writes q0 for the
    specificity, q1 for the sensitivity), clipped to [0, 1]. The interval is the delta method on
    adjusted estimates (Agresti-Coull style: ``p`` with z²/2 added to each side, ``tpr`` and
    ``tnr`` with one added to each side), so it accounts for the uncertainty of ``p``, ``tpr``
    and ``tnr`` and keeps a width when a rate is 0 or 1; the simulation in
    ``bench/judge_correction.py`` measured its coverage (docs/certify.md).

    Args:
        judged_pass: samples the judge passed, of ``n`` graded.
        true_pos: labelled human-pass items the judge passed, of ``positives``.
        true_neg: labelled human-fail items the judge failed, of ``negatives``.
        min_per_class: fewest human-pass and human-fail labels accepted.

    Raises:
        ConfigError: too few labels on a side, counts out of range, or a judge no better than
            chance (``tpr + tnr - 1 <= 0``), whose verdicts carry no information to correct.
    """
    for name, k, m in (
        ("judged_pass", judged_pass, n),
        ("true_pos", true_pos, positives),
        ("true_neg", true_neg, negatives),
    ):
        if m < 0 or not 0 <= k <= m:
            raise ConfigError(f"rogan_gladen: {name} must be between 0 and {m}, got {k}")
    rates = ErrorRates.from_counts(true_pos, positives, true_neg, negatives)
    return correct_pass_rate(
        judged_pass, n, rates, confidence=confidence, min_per_class=min_per_class
    )


def correct_pass_rate(
    judged_pass: int,
    n: int,
    rates: ErrorRates,
    *,
    confidence: float = 0.95,
    min_per_class: int = MIN_LABELS_PER_CLASS,
) -> CorrectedRate:
    """The Rogan-Gladen corrected pass rate of ``judged_pass`` of ``n`` under ``rates``.

    From counts, the interval is :func:`rogan_gladen`'s adjusted delta method. Weighted, it is
    the delta method with the weighted rates' variances and covariance:
    ``Var = [p(1-p)/n + (1-θ)² var0 + θ² var1 - 2θ(1-θ) cov] / J²`` (``p`` adjusted as from
    counts, ``J = TPR + TNR - 1``).

    Raises:
        ConfigError: as :func:`rogan_gladen`.
    """
    if n <= 0:
        raise ConfigError("rogan_gladen: the judge graded no sample")
    if not 0 <= judged_pass <= n:
        raise ConfigError(f"rogan_gladen: judged_pass must be between 0 and {n}, got {judged_pass}")
    if rates.positives < min_per_class or rates.negatives < min_per_class:
        raise ConfigError(
            f"cannot correct the pass rate: {rates.positives} human-pass and "
            f"{rates.negatives} human-fail label(s); each side needs at least {min_per_class}. "
            "Label more samples"
        )
    z = _z(confidence)
    p, tpr, tnr = judged_pass / n, rates.tpr, rates.tnr
    youden = tpr + tnr - 1.0
    if youden <= 0.0:
        raise ConfigError(
            f"cannot correct the pass rate: the judge's TPR {tpr:.3f} + TNR {tnr:.3f} - 1 = "
            f"{youden:.3f} is not above 0, so its verdicts say nothing about the true rate "
            "(no better than chance); fix the judge before trusting its pass rate"
        )
    theta = (p + tnr - 1.0) / youden
    if rates.covariance is None:
        counts = (rates.true_pos, rates.positives, rates.true_neg, rates.negatives)
        low, high = _adjusted_delta(judged_pass, n, *counts, z)
    else:
        low, high = _weighted_delta(judged_pass, n, rates, z)
    from aieval.stats._bootstrap import wilson_interval

    return CorrectedRate(
        raw=p,
        raw_interval=wilson_interval(judged_pass, n, confidence=confidence),
        corrected=min(1.0, max(0.0, theta)),
        low=low,
        high=high,
        clipped=not 0.0 <= theta <= 1.0,
        tpr=tpr,
        tnr=tnr,
        n=n,
        positives=rates.positives,
        negatives=rates.negatives,
        confidence=confidence,
        weighted=rates.weighted,
        unweighted=rates.unweighted,
    )


def _weighted_delta(k: int, n: int, rates: ErrorRates, z: float) -> tuple[float, float]:
    """The delta-method interval with design-weighted TPR and TNR (``rates.covariance``)."""
    assert rates.covariance is not None
    var1, var0, cov = rates.covariance
    nn = n + z * z
    p = (k + z * z / 2.0) / nn
    youden = rates.youden
    theta = (p + rates.tnr - 1.0) / youden
    var = (
        p * (1 - p) / nn
        + (1 - theta) ** 2 * var0
        + theta**2 * var1
        - 2.0 * theta * (1 - theta) * cov
    ) / youden**2
    half = z * math.sqrt(max(var, 0.0))
    return max(0.0, theta - half), min(1.0, theta + half)


def _adjusted_delta(
    k: int, n: int, tp: int, m1: int, tn: int, m0: int, z: float
) -> tuple[float, float]:
    nn, mm1, mm0 = n + z * z, m1 + 2.0, m0 + 2.0
    p, q1, q0 = (k + z * z / 2.0) / nn, (tp + 1.0) / mm1, (tn + 1.0) / mm0
    youden = q1 + q0 - 1.0
    if youden <= 0.0:
        return 0.0, 1.0
    theta = (p + q0 - 1.0) / youden
    var = (
        p * (1 - p) / nn + (1 - theta) ** 2 * q0 * (1 - q0) / mm0 + theta**2 * q1 * (1 - q1) / mm1
    ) / youden**2
    half = z * math.sqrt(var)
    return max(0.0, theta - half), min(1.0, theta + half)


def delta_interval(
    k: int, n: int, tp: int, m1: int, tn: int, m0: int, z: float
) -> tuple[float, float]:
    """The plain delta-method interval (unadjusted estimates), kept for the simulation."""
    p, q1, q0 = k / n, tp / m1, tn / m0
    youden = q1 + q0 - 1.0
    if youden <= 0.0:
        return 0.0, 1.0
    theta = (p + q0 - 1.0) / youden
    var = (
        p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0 + theta**2 * q1 * (1 - q1) / m1
    ) / youden**2
    half = z * math.sqrt(var)
    return max(0.0, theta - half), min(1.0, theta + half)
