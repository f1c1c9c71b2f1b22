"""A judge against humans on pass/fail: kappa's analytic interval, Fleiss' kappa, Rogan-Gladen."""

import warnings

import numpy as np
import pytest
from tests.support.oracles import cohen_kappa_score

from aieval.errors import ConfigError
from aieval.stats import fleiss_kappa, kappa_interval, rogan_gladen, wilson_interval

# Fleiss (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 items, 14 raters, 5 categories.
FLEISS_EXAMPLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


@pytest.mark.parametrize("seed", range(8))
def test_kappa_estimate_matches_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = (rng.random(60) < 0.6).tolist()
    b = [x if rng.random() < 0.8 else not x for x in a]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = cohen_kappa_score(a, b)
    ci = kappa_interval(a, b)
    assert ci.estimate == pytest.approx(oracle, abs=1e-12)
    assert ci.low < ci.estimate < ci.high


def test_kappa_standard_error_matches_the_spread_of_kappa_over_samples() -> None:
    # The analytic SE against the actual spread of kappa over 4,000 samples of 200 items.
    cells = np.array([0.35, 0.08, 0.05, 0.52])  # human fail/pass x judge fail/pass
    rng = np.random.default_rng(1)
    draws = rng.multinomial(200, cells, 4000) / 200
    agree = draws[:, 0] + draws[:, 3]
    h1, j1 = draws[:, 2] + draws[:, 3], draws[:, 1] + draws[:, 3]
    chance = h1 * j1 + (1 - h1) * (1 - j1)
    spread = float(np.std((agree - chance) / (1 - chance)))
    counts = np.round(cells * 200).astype(int)
    human = [False] * (counts[0] + counts[1]) + [True] * (counts[2] + counts[3])
    judge = [False] * counts[0] + [True] * counts[1] + [False] * counts[2] + [True] * counts[3]
    ci = kappa_interval(human, judge, method="analytic")
    se = (ci.high - ci.low) / (2 * 1.959964)
    assert se == pytest.approx(spread, rel=0.07)


def test_kappa_interval_of_raters_who_never_differ_in_label_is_the_whole_range() -> None:
    ci = kappa_interval([True] * 5, [True] * 5)
    assert (ci.estimate, ci.low, ci.high) == (0.0, -1.0, 1.0)
    with pytest.raises(ConfigError, match="pair them"):
        kappa_interval([True], [])


def test_fleiss_kappa_matches_the_worked_example() -> None:
    assert fleiss_kappa(FLEISS_EXAMPLE) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_of_two_raters_is_scotts_pi_and_allows_more_raters_on_some_items() -> None:
    # Hand-worked: agreement (1 + 1 + 0 + 1) / 4 = 0.75; shares 5/8 and 3/8, chance 34/64.
    assert fleiss_kappa([[2, 0], [0, 2], [1, 1], [2, 0]]) == pytest.approx(
        (0.75 - 34 / 64) / (1 - 34 / 64)
    )
    # A third reviewer on one item: its agreement is the share of its 3 pairs that agree (1/3).
    mixed = fleiss_kappa([[2, 0], [0, 2], [2, 1]])
    shares = np.array([4, 3]) / 7
    chance = float((shares**2).sum())
    assert mixed == pytest.approx(((1 + 1 + 1 / 3) / 3 - chance) / (1 - chance))
    with pytest.raises(ConfigError, match="at least two"):
        fleiss_kappa([[1, 0], [2, 0]])


def test_rogan_gladen_hand_worked() -> None:
    rate = rogan_gladen(700, 1000, true_pos=90, positives=100, true_neg=80, negatives=100)
    assert rate.raw == 0.7
    assert rate.corrected == pytest.approx((0.7 + 0.8 - 1) / (0.9 + 0.8 - 1))
    assert rate.low < rate.corrected < rate.high
    assert not rate.clipped
    assert (rate.tpr, rate.tnr) == (0.9, 0.8)
    assert rate.raw_interval == wilson_interval(700, 1000)


def test_the_published_bias_is_corrected_and_the_naive_interval_misses_the_truth() -> None:
    # The example (arXiv 2511.21140): a lenient judge reports 0.838 when the true rate
    # is 0.714. Here the judge passes 98% of what humans pass and half of what they fail.
    truth = 0.714
    rate = rogan_gladen(838, 1000, true_pos=245, positives=250, true_neg=50, negatives=100)
    assert not rate.raw_interval.low <= truth <= rate.raw_interval.high
    assert rate.low <= truth <= rate.high
    assert abs(rate.corrected - truth) < 0.015


def test_an_estimate_outside_zero_one_is_clipped_and_says_so() -> None:
    rate = rogan_gladen(50, 1000, true_pos=90, positives=100, true_neg=80, negatives=100)
    assert rate.corrected == 0.0
    assert rate.clipped
    assert rate.low == 0.0


def test_a_judge_no_better_than_chance_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"TPR 0\.500 \+ TNR 0\.500 - 1 = 0\.000"):
        rogan_gladen(500, 1000, true_pos=50, positives=100, true_neg=50, negatives=100)


def test_too_few_labels_on_a_side_are_refused() -> None:
    with pytest.raises(ConfigError, match="3 human-fail label"):
        rogan_gladen(500, 1000, true_pos=90, positives=100, true_neg=3, negatives=3)
    with pytest.raises(ConfigError, match="between 0 and 10"):
        rogan_gladen(500, 1000, true_pos=11, positives=10, true_neg=9, negatives=10)


def test_the_interval_reflects_the_labels_uncertainty() -> None:
    few = rogan_gladen(700, 1000, true_pos=18, positives=20, true_neg=16, negatives=20)
    many = rogan_gladen(700, 1000, true_pos=900, positives=1000, true_neg=800, negatives=1000)
    assert few.high - few.low > 2 * (many.high - many.low)
    # A perfect judge on its labels still leaves an interval wider than the run's alone.
    perfect = rogan_gladen(700, 1000, true_pos=50, positives=50, true_neg=50, negatives=50)
    assert perfect.high - perfect.low > perfect.raw_interval.high - perfect.raw_interval.low


def test_the_bootstrap_interval_is_seeded_and_near_the_analytic_one_on_many_items() -> None:
    rng = np.random.default_rng(3)
    a = (rng.random(400) < 0.5).tolist()
    b = [x if rng.random() < 0.85 else not x for x in a]
    boot = kappa_interval(a, b)
    assert boot == kappa_interval(a, b)  # seeded: a report is reproducible
    assert boot != kappa_interval(a, b, seed=1)
    analytic = kappa_interval(a, b, method="analytic")
    assert boot.estimate == analytic.estimate
    assert boot.low == pytest.approx(analytic.low, abs=0.02)
    assert boot.high == pytest.approx(analytic.high, abs=0.02)
    with pytest.raises(ConfigError, match="bootstrap or analytic"):
        kappa_interval(a, b, method="exact")  # type: ignore[arg-type]


def test_kappa_interval_keeps_a_width_at_the_boundary_in_stats_itself() -> None:
    # perfect agreement on 112 items, 17 negatives: the bound the judge path gives, 0.905
    human = [False] * 17 + [True] * 95
    for method in ("bootstrap", "analytic"):
        ci = kappa_interval(human, human, method=method)  # type: ignore[arg-type]
        assert ci.estimate == 1.0 and ci.high == 1.0
        assert ci.low == pytest.approx(0.905, abs=0.001)
    # one empty cell (no false pass): every resample has it empty too, yet the bound stays below
    judge = [False] * 12 + [True] * 100
    ci = kappa_interval(human, judge)
    assert ci.low < ci.estimate < ci.high and ci.high - ci.low > 0.15
    # away from the boundary nothing changes: the plain percentile interval, seeded
    mixed = [True, True, False, False, True] * 30
    other = [True, False, False, True, True] * 30
    assert kappa_interval(mixed, other).low > -0.2
