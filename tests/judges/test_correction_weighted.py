"""The corrected pass rate takes the judge's TPR and TNR weighted by its review queue's design:
on a stratified queue whose labelled items over-represent the judge's hard cases, the weighted
correction covers the run's true pass rate and the unweighted one does not."""

from __future__ import annotations

import random

import pytest

from aieval.core import ReviewLabel
from aieval.judges import (
    ReviewDesign,
    SampleKey,
    agreement,
    corrected_pass_rate,
    judge_error_rates,
)
from aieval.report._policy_correction import corrected_difference
from aieval.stats import ErrorRates, correct_pass_rate, rogan_gladen
from aieval.store import ReviewWeight

RUN = "r"
#: labels drawn per stratum of judge score: most near the threshold, where the judge errs
DRAWS = {"low": 100, "near": 400, "high": 100}


def _queue(seed: int) -> tuple[float, dict[SampleKey, bool], list[ReviewLabel], ReviewDesign]:
    """A run of 6,000 samples whose judge is sure and right far from its threshold and lenient
    near it (humans pass 5% of the items there, the judge half), and a 600-item queue drawn
    by stratum of judge score, 400 of them near the threshold (each item weighted by its
    stratum's size over its draws). Returns the true pass rate, the judge's verdicts, the
    labels and the design."""
    rng = random.Random(seed)
    scores = [rng.random() for _ in range(6000)]
    human = [rng.random() < (0.02 if s < 0.35 else 0.98 if s > 0.65 else 0.05) for s in scores]
    verdicts = {(RUN, f"s{i}"): s >= 0.5 for i, s in enumerate(scores)}
    strata: dict[str, list[int]] = {"low": [], "near": [], "high": []}
    for i, s in enumerate(scores):
        strata["low" if s < 0.35 else "high" if s > 0.65 else "near"].append(i)
    weights: dict[SampleKey, ReviewWeight] = {}
    for name, members in strata.items():
        drawn = rng.sample(members, DRAWS[name])
        weights |= {(RUN, f"s{i}"): ReviewWeight(name, len(members) / len(drawn)) for i in drawn}
    labels = [
        ReviewLabel("j", RUN, sample, "ana", passed=human[int(sample[1:])]) for _, sample in weights
    ]
    return sum(human) / len(human), verdicts, labels, ReviewDesign("q", (RUN,), weights)


def test_the_weighted_correction_covers_the_true_rate_and_the_unweighted_does_not() -> None:
    covered = {"weighted": 0, "unweighted": 0}
    for seed in range(8):
        true, verdicts, labels, design = _queue(seed)
        weighted = agreement(labels, verdicts, design=[design])
        plain = agreement(labels, verdicts)
        # the labelled items' own TNR is biased low: the judge's false passes near the
        # threshold are over-drawn
        assert weighted.tpr is not None and plain.tnr is not None and weighted.tnr is not None
        assert plain.tnr.estimate < weighted.tnr.estimate - 0.02
        for name, figures in (("weighted", weighted), ("unweighted", plain)):
            rate = corrected_pass_rate(verdicts, figures)
            covered[name] += rate.low <= true <= rate.high
        rate = corrected_pass_rate(verdicts, weighted)
        assert rate.weighted and rate.unweighted is None
        assert rate.tpr == weighted.tpr.estimate and rate.tnr == weighted.tnr.estimate
        assert rate.to_dict()["weighted"] is True
    assert covered == {"weighted": 8, "unweighted": 0}


def test_the_fall_back_says_why_as_the_agreement_does() -> None:
    _, verdicts, labels, design = _queue(0)
    spare = next(key[1] for key in verdicts if key not in design.weights)
    outside = ReviewLabel("j", RUN, spare, "bo", passed=True, labelled_at=1.0)
    figures = agreement([*labels, outside], verdicts, design=[design])
    rate = corrected_pass_rate(verdicts, figures)
    assert not figures.weighted and not rate.weighted
    assert rate.unweighted == figures.unweighted
    assert "1 labelled item(s) are in no review queue of this judge" in str(rate.unweighted)
    assert rate.to_dict()["unweighted"] == figures.unweighted
    # unweighted, the numbers are exactly the counts' correction
    counts = rogan_gladen(
        sum(verdicts.values()), len(verdicts), true_pos=figures.true_pos,
        positives=figures.positives, true_neg=figures.true_neg, negatives=figures.negatives,
    )  # fmt: skip
    assert (rate.corrected, rate.low, rate.high) == (counts.corrected, counts.low, counts.high)


def test_the_comparison_difference_uses_the_weighted_rates_and_their_covariance() -> None:
    _, verdicts, labels, design = _queue(1)
    weighted = judge_error_rates(agreement(labels, verdicts, design=[design]))
    assert weighted.weighted and weighted.covariance is not None
    deltas = [-1] * 30 + [0] * 570
    diff, se = corrected_difference(deltas, rates=weighted)
    assert diff == pytest.approx(-0.05 / weighted.youden)
    var1, var0, cov = weighted.covariance
    mean, n = -0.05, 600
    var_d = sum((d - mean) ** 2 for d in deltas) / (n - 1)
    expected = var_d / (n * weighted.youden**2) + mean**2 * (var1 + var0 + 2 * cov) / (
        weighted.youden**4
    )
    assert se == pytest.approx(expected**0.5)
    # the counts' path is unchanged
    counts = ErrorRates.from_counts(45, 50, 35, 50)
    assert corrected_difference(deltas, rates=counts) == corrected_difference(
        deltas, true_pos=45, positives=50, true_neg=35, negatives=50
    )


def test_a_weighted_correction_by_hand() -> None:
    rates = ErrorRates(0.9, 0.8, 45, 50, 40, 50, covariance=(0.001, 0.002, -0.0005), weighted=True)
    rate = correct_pass_rate(600, 1000, rates)
    z2 = 1.959963984540054**2
    p = (600 + z2 / 2) / (1000 + z2)
    theta = (p + 0.8 - 1) / 0.7
    var = (p * (1 - p) / (1000 + z2) + (1 - theta) ** 2 * 0.002 + theta**2 * 0.001
           + 2 * theta * (1 - theta) * 0.0005) / 0.49  # fmt: skip
    assert rate.corrected == pytest.approx((0.6 + 0.8 - 1) / 0.7)
    assert rate.low == pytest.approx(theta - 1.959963984540054 * var**0.5)
    assert rate.high == pytest.approx(theta + 1.959963984540054 * var**0.5)
