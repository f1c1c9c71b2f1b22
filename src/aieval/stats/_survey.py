"""Judge-human agreement from a stratified sample of labels, weighted back to the population.

A review queue draws its items stratum by stratum with unequal chances (more where the judge is
unsure), so the plain kappa of the labelled items is the judge's agreement on that slice, not
on the run. Here each stratum's 2x2 cell proportions (judge pass/fail x human pass/fail) are
weighted by the stratum's share of the population (the stratified estimator), and kappa, TPR
and TNR follow from the weighted cells. Their 95% intervals come from the stratified variance
of the cell proportions (within-stratum sample covariance, finite population correction) by the
delta method. With one stratum the estimates are the plain ones (Cohen's kappa).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from aieval.errors import ConfigError
from aieval.stats._bootstrap import ConfidenceInterval

__all__ = ["WeightedAgreement", "stratum_sizes", "weighted_agreement"]

#: The cells, in order: (judge, human) = (pass, pass), (pass, fail), (fail, pass), (fail, fail).
#: The labels added to each human verdict per judge verdict in the variance (Jeffreys).
_JEFFREYS = 0.5
_CELLS = ((True, True), (True, False), (False, True), (False, False))


@dataclass(frozen=True, slots=True)
class WeightedAgreement:
    """Judge-human agreement weighted to the population the labels were drawn from.

    Attributes:
        kappa: Cohen's kappa of the weighted cells, with its interval.
        tpr: the judge's pass rate among human passes (``None``: no human pass labelled).
        tnr: the judge's fail rate among human fails (``None``: no human fail labelled).
        base_rate: the weighted human pass rate.
        labels: how many labels it rests on.
        strata: how many strata they fall in.
        rates_cov: the delta-method variances of TPR and TNR and their covariance
            ``(var_tpr, var_tnr, cov)`` (``None`` when either is undefined); the corrected pass
            rate needs all three, since both rates come from the same stratified cells.
    """

    kappa: ConfidenceInterval
    tpr: ConfidenceInterval | None
    tnr: ConfidenceInterval | None
    base_rate: float
    labels: int
    strata: int
    rates_cov: tuple[float, float, float] | None = None


def stratum_sizes(weights: Iterable[tuple[str, float | None]]) -> dict[str, float]:
    """Each stratum's population size from ``(stratum, design weight)`` of EVERY item drawn
    (labelled or not): the sum of its weights (a weight of ``None`` counts 1)."""
    sizes: dict[str, float] = {}
    for stratum, weight in weights:
        sizes[stratum] = sizes.get(stratum, 0.0) + (1.0 if weight is None else weight)
    return sizes


def weighted_agreement(
    judge: Sequence[bool],
    human: Sequence[bool],
    strata: Sequence[str] | None = None,
    sizes: Mapping[str, float] | None = None,
    *,
    confidence: float = 0.95,
) -> WeightedAgreement:
    """Kappa, TPR and TNR of ``judge`` against ``human`` verdicts (one pair per label), each
    label in stratum ``strata[i]`` of population size ``sizes[stratum]``.

    Without ``strata`` the labels are one simple random sample; without ``sizes`` each stratum
    counts by its labels (no finite population correction). The variance of the cells within
    the strata is smoothed by half a label per human verdict for each judge verdict: for kappa
    shared among the strata by their labels, for TPR and TNR in every stratum (:func:`_within`).

    Raises:
        ConfigError: lengths differ, no labels, a stratum has no size or a size below its
            label count, or a stratum of ``sizes`` has no label (its population is unmeasured:
            the estimate would silently leave it out).
    """
    n = len(judge)
    if n == 0 or len(human) != n or (strata is not None and len(strata) != n):
        raise ConfigError(
            f"weighted_agreement: {n} judge, {len(human)} human"
            f" and {n if strata is None else len(strata)} stratum values;"
            " give one of each per label"
        )
    names = list(strata) if strata is not None else [""] * n
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        groups.setdefault(name, []).append(i)
    if sizes is not None:
        unlabelled = sorted(set(sizes) - set(groups))
        if unlabelled:
            raise ConfigError(
                f"weighted_agreement: strata {', '.join(unlabelled)} have no label, so their share"
                " of the population is unmeasured; label at least one item in each"
            )
        for name, members in groups.items():
            if name not in sizes or sizes[name] < len(members):
                raise ConfigError(
                    f"weighted_agreement: stratum {name!r} has {len(members)} labels but a size of"
                    f" {sizes.get(name)}; give each stratum its population size"
                )
    cells = np.array(
        [[float((j, h) == cell) for cell in _CELLS] for j, h in zip(judge, human, strict=True)]
    )
    population = sum(sizes.values()) if sizes is not None else float(n)
    share = {
        name: (sizes[name] if sizes is not None else len(members)) / population
        for name, members in groups.items()
    }
    p = sum(share[name] * cells[members].mean(axis=0) for name, members in groups.items())
    # kappa's variance shares half a label per verdict among the strata; the rates' keep half
    # a label in every stratum (:func:`_within`)
    totals = cells.sum(axis=0)
    per_verdict = np.array([totals[0] + totals[1], totals[2] + totals[3]])
    shared, each = np.zeros((4, 4)), np.zeros((4, 4))
    for name, members in groups.items():
        m = len(members)
        fpc = 1 - m / sizes[name] if sizes is not None else 1.0
        counts = cells[members].sum(axis=0)
        held = np.array([counts[0] + counts[1], counts[2] + counts[3]])
        factor = share[name] ** 2 * fpc / m
        shared += factor * _within(counts, _JEFFREYS * held / np.maximum(per_verdict, 1.0))
        each += factor * _within(counts, np.full(2, _JEFFREYS))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return WeightedAgreement(
        kappa=_interval(*_kappa(p), shared, z, confidence, (-1.0, 1.0)),
        tpr=_rate(p, each, z, confidence, hit=0, miss=2),
        tnr=_rate(p, each, z, confidence, hit=3, miss=1),
        base_rate=float(p[0] + p[2]),
        labels=n,
        strata=len(groups),
        rates_cov=_rates_cov(p, each),
    )


def _within(
    counts: npt.NDArray[np.float64], pseudo: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """The covariance of one label's cell indicators in a stratum with cell ``counts``.

    ``pseudo[k]`` labels are added to both human verdicts of judge verdict ``k`` (pass, fail)
    the stratum holds, so a few labels that all agree do not claim a variance of zero.

    For kappa that is half a label per judge verdict (Jeffreys) shared among the strata by
    their labels of that verdict: a queue puts few labels where the judge is sure, and a full
    half label in each of those strata would give each the spread of a coin toss, weighted by
    its many items (a queue of 20 strata then needs far more labels than a simple random
    sample for the same width). For TPR and TNR, ratios that rest on the few labels of one
    human verdict, each stratum keeps its half label. With one stratum both are the plain
    Jeffreys smoothing; with many labels, the sample covariance.
    """
    m = float(counts.sum())
    smoothed = counts.copy()
    for k, row in enumerate(((0, 1), (2, 3))):
        if counts[list(row)].sum() > 0:
            smoothed[list(row)] += pseudo[k]
    q = smoothed / smoothed.sum()
    multinomial = np.diag(q) - np.outer(q, q)
    return multinomial * (m / (m - 1) if m > 1 else 1.0)


def _kappa(p: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.float64]]:
    """Kappa of the cell proportions ``p`` and its gradient in them."""
    po = p[0] + p[3]
    judged, labelled = p[0] + p[1], p[0] + p[2]
    pe = judged * labelled + (1 - judged) * (1 - labelled)
    if pe >= 1:
        # both raters gave one verdict throughout: kappa is undefined; agreement is all there is
        return (1.0 if po >= 1 else 0.0), np.zeros(4)
    dpo = np.array([1.0, 0.0, 0.0, 1.0])
    dj, dh = 2 * labelled - 1, 2 * judged - 1
    dpe = np.array([dj + dh, dj, dh, 0.0])
    kappa = (po - pe) / (1 - pe)
    return float(kappa), (dpo * (1 - pe) - dpe * (1 - po)) / (1 - pe) ** 2


def _rate(
    p: npt.NDArray[np.float64],
    cov: npt.NDArray[np.float64],
    z: float,
    confidence: float,
    *,
    hit: int,
    miss: int,
) -> ConfidenceInterval | None:
    """The ratio ``p[hit] / (p[hit] + p[miss])`` (TPR or TNR) with its delta-method interval."""
    total = p[hit] + p[miss]
    if total <= 0:
        return None
    gradient = _ratio_gradient(p, hit, miss)
    return _interval(float(p[hit] / total), gradient, cov, z, confidence, (0.0, 1.0))


def _interval(
    estimate: float,
    gradient: npt.NDArray[np.float64],
    cov: npt.NDArray[np.float64],
    z: float,
    confidence: float,
    bounds: tuple[float, float],
) -> ConfidenceInterval:
    """``estimate`` +- ``z`` delta-method standard errors, clipped to ``bounds``."""
    se = math.sqrt(max(float(gradient @ cov @ gradient), 0.0))
    low, high = bounds
    return ConfidenceInterval(
        estimate, max(low, estimate - z * se), min(high, estimate + z * se), confidence
    )


def _ratio_gradient(p: npt.NDArray[np.float64], hit: int, miss: int) -> npt.NDArray[np.float64]:
    """The gradient of ``p[hit] / (p[hit] + p[miss])`` in the cells."""
    total = p[hit] + p[miss]
    gradient = np.zeros(4)
    gradient[hit] = p[miss] / total**2
    gradient[miss] = -p[hit] / total**2
    return gradient


def _rates_cov(
    p: npt.NDArray[np.float64], cov: npt.NDArray[np.float64]
) -> tuple[float, float, float] | None:
    """Var(TPR), Var(TNR) and Cov(TPR, TNR) by the delta method; ``None`` if one is undefined."""
    if p[0] + p[2] <= 0 or p[3] + p[1] <= 0:
        return None
    g1, g0 = _ratio_gradient(p, 0, 2), _ratio_gradient(p, 3, 1)
    return float(g1 @ cov @ g1), float(g0 @ cov @ g0), float(g1 @ cov @ g0)
