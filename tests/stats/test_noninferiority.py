"""The studentized-bootstrap and paired-proportion non-inferiority tests, with SciPy oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats
from scipy.optimize import minimize_scalar

from aieval.errors import ConfigError
from aieval.stats import noninferiority_test
from aieval.stats._noninferiority import tango_z


def _restricted_mle_z(wins: int, losses: int, n: int, delta: float) -> float:
    """Tango's score statistic with the nuisance rate maximised numerically (the oracle)."""
    rest = n - wins - losses

    def nll(p: float) -> float:
        return -(
            wins * math.log(p + delta) + losses * math.log(p) + rest * math.log(1 - 2 * p - delta)
        )

    lo, hi = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12
    p = minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}).x
    return (wins - losses - n * delta) / math.sqrt(n * (2 * p + delta * (1 - delta)))


@pytest.mark.parametrize(
    ("wins", "losses", "n", "delta"),
    [
        pytest.param(30, 45, 500, -0.05, id="below"),
        pytest.param(30, 45, 500, -0.01, id="near"),
        pytest.param(12, 3, 80, 0.02, id="positive"),
        pytest.param(5, 9, 40, -0.2, id="small-n"),
    ],
)
def test_tango_statistic_matches_a_numerical_restricted_mle(
    wins: int, losses: int, n: int, delta: float
) -> None:
    assert tango_z(wins, losses, n, delta) == pytest.approx(
        _restricted_mle_z(wins, losses, n, delta), rel=1e-6
    )


@pytest.mark.parametrize(("wins", "losses"), [(30, 45), (9, 2), (20, 12)])
def test_at_margin_zero_the_score_test_is_mcnemars(wins: int, losses: int) -> None:
    """With no margin, Tango's statistic is McNemar's ``(b - c) / sqrt(b + c)``; its one-sided
    p-value is close to the exact conditional (binomial) McNemar test's."""
    d = np.array([100.0] * wins + [-100.0] * losses + [0.0] * 200)
    result = noninferiority_test(d, margin=0.0, method="proportion", scale=100.0)
    assert result.statistic == pytest.approx((wins - losses) / math.sqrt(wins + losses))
    exact = scipy_stats.binomtest(wins, wins + losses, 0.5, alternative="greater").pvalue
    assert result.p_value == pytest.approx(exact, abs=0.05)


def test_proportion_bounds_invert_the_statistic() -> None:
    d = np.array([100.0] * 30 + [-100.0] * 45 + [0.0] * 425)
    r = noninferiority_test(d, margin=1.0, method="proportion", scale=100.0)
    z = scipy_stats.norm.ppf(0.95)
    assert tango_z(30, 45, 500, r.lower_bound / 100) == pytest.approx(z, abs=1e-6)
    assert tango_z(30, 45, 500, r.upper_bound / 100) == pytest.approx(-z, abs=1e-6)
    assert r.mean_delta == pytest.approx(-3.0) and not r.non_inferior and not r.regressed
    assert r.min_margin == pytest.approx(-r.lower_bound)
    # A mean 3 points down: more such data would show a regression, not non-inferiority.
    assert r.examples_needed_at_observed_difference is None and r.examples_needed_if_equal is None
    # Within the margin (-0.2 points): Tango's statistic reaches z(0.95) + z(0.8) at that n,
    # and not one example earlier, at the observed shares of wins (7.4%) and losses (7.6%)...
    near = np.array([100.0] * 37 + [-100.0] * 38 + [0.0] * 425)
    r = noninferiority_test(near, margin=1.0, method="proportion", scale=100.0)
    target = scipy_stats.norm.ppf(0.95) + scipy_stats.norm.ppf(0.8)
    n = r.examples_needed_at_observed_difference
    assert n is not None
    assert tango_z(0.074 * n, 0.076 * n, n, -0.01) >= target
    assert tango_z(0.074 * (n - 1), 0.076 * (n - 1), n - 1, -0.01) < target
    # ...and for an equal candidate with the same 15% discordant pairs, split evenly.
    n = r.examples_needed_if_equal
    assert n is not None and n < r.examples_needed_at_observed_difference
    assert tango_z(0.075 * n, 0.075 * n, n, -0.01) >= target
    assert tango_z(0.075 * (n - 1), 0.075 * (n - 1), n - 1, -0.01) < target


def test_no_discordant_pairs_still_needs_enough_examples() -> None:
    """200 identical 0/1 outcomes cannot show a 1-point margin: with no discordant pair the
    bound is ``-z^2 / (n + z^2)``, 1.3 points at n = 200."""
    r = noninferiority_test(np.zeros(200), margin=1.0, method="proportion", scale=100.0)
    z2 = scipy_stats.norm.ppf(0.95) ** 2
    assert r.lower_bound == pytest.approx(-100 * z2 / (200 + z2), rel=1e-6)
    assert r.non_inferior is False
    assert noninferiority_test(np.zeros(200), margin=1.0, method="t").non_inferior is True
    # at that n, the same (empty) discordance shows the margin with 80% power; the observed
    # difference is 0, so both sample sizes are the same
    n = r.examples_needed_if_equal
    assert n is not None and 600 < n < 630 and r.examples_needed_at_observed_difference == n
    assert math.sqrt(n * 0.01 / 0.99) >= scipy_stats.norm.ppf(0.95) + scipy_stats.norm.ppf(0.8)


def test_bootstrap_t_agrees_with_t_on_gaussian_data_and_corrects_skew() -> None:
    rng = np.random.default_rng(4)
    gauss = rng.normal(0.2, 5.0, size=800)
    t = noninferiority_test(gauss, margin=1.0, method="t")
    boot = noninferiority_test(gauss, margin=1.0, method="bootstrap-t")
    assert boot.lower_bound == pytest.approx(t.lower_bound, abs=0.05)
    assert boot.method == "studentized bootstrap" and t.method == "paired t-test"
    # A few large drops: the t bound is too optimistic, the studentized bound lower.
    skewed = np.where(rng.random(800) < 0.05, -rng.uniform(20, 80, 800), rng.normal(1.6, 3, 800))
    t, boot = (noninferiority_test(skewed, margin=1.0, method=m) for m in ("t", "bootstrap-t"))
    assert boot.lower_bound < t.lower_bound
    assert boot.upper_bound < t.upper_bound


def test_the_same_seed_gives_the_same_decision() -> None:
    d = np.random.default_rng(5).normal(-0.3, 6.0, size=300)
    first, again = (noninferiority_test(d, margin=1.0, method="bootstrap-t", seed=3) for _ in "ab")
    assert first == again


def test_sample_sizes_plan_at_the_observed_difference_and_for_an_equal_candidate() -> None:
    d = np.random.default_rng(6).normal(-0.2, 6.0, size=100)
    r = noninferiority_test(d, margin=1.0, method="t")
    z = scipy_stats.norm.ppf(0.95) + scipy_stats.norm.ppf(0.8)
    sd = d.std(ddof=1)
    assert r.sd_delta == pytest.approx(sd) and r.planning_power == 0.8
    observed = (z * sd / (d.mean() + 1.0)) ** 2
    assert r.examples_needed_at_observed_difference == math.ceil(observed)
    assert r.examples_needed_if_equal == math.ceil((z * sd / 1.0) ** 2)
    shifted = noninferiority_test(d - 0.5, margin=1.0, method="t")
    assert shifted.examples_needed_if_equal == r.examples_needed_if_equal  # same spread
    assert shifted.examples_needed_at_observed_difference == math.ceil(
        (z * sd / (d.mean() - 0.5 + 1.0)) ** 2
    )
    # observed beyond the margin: more data would show a regression, so no n is promised
    beyond = noninferiority_test(d - 5, margin=1.0, method="t")
    assert beyond.examples_needed_at_observed_difference is None
    assert beyond.examples_needed_if_equal is None
    # no margin: an equal candidate can never be shown; a better one can
    better = noninferiority_test(d + 1.0, margin=0.0, method="t")
    assert better.examples_needed_if_equal is None
    assert better.examples_needed_at_observed_difference == math.ceil(
        (z * sd / (d.mean() + 1.0)) ** 2
    )


def test_regression_beyond_the_margin_is_shown_by_the_upper_bound() -> None:
    d = np.random.default_rng(7).normal(-4.0, 3.0, size=200)
    for method in ("t", "bootstrap-t"):
        r = noninferiority_test(d, margin=1.0, method=method)  # type: ignore[arg-type]
        assert r.regressed and not r.non_inferior and r.upper_bound < -1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"method": "z"}, "method must be one of", id="method"),
        pytest.param({"method": "proportion"}, "0/1 outcomes", id="not-binary"),
        pytest.param({"method": "proportion", "scale": 0.0}, "scale", id="scale"),
        pytest.param({"method": "bootstrap-t", "n_resamples": 10}, "n_resamples", id="resamples"),
    ],
)
def test_bad_method_arguments_raise_config_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        noninferiority_test([0.5, 1.0, -0.5], margin=1.0, **kwargs)  # type: ignore[arg-type]
