"""The closed-form intervals against scipy as the oracle (statsmodels is not a dependency)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from aieval.errors import ConfigError
from aieval.stats import (
    paired_t_interval,
    t_interval,
    t_interval_from_moments,
    t_interval_from_sums,
    wilson_interval,
)


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("n", [2, 7, 500, 20_000])
def test_t_interval_matches_scipy(n: int, confidence: float) -> None:
    x = np.random.default_rng(n).gamma(0.7, 12.0, size=n)
    want = sps.t.interval(confidence, n - 1, loc=x.mean(), scale=sps.sem(x))
    got = t_interval(x, confidence=confidence)
    assert got.estimate == pytest.approx(x.mean(), rel=1e-15)
    assert got.low == pytest.approx(want[0], rel=1e-12, abs=1e-12)
    assert got.high == pytest.approx(want[1], rel=1e-12, abs=1e-12)
    assert got.confidence == confidence


def test_from_sums_matches_moments_and_scipy_for_scores() -> None:
    x = np.random.default_rng(3).uniform(0.0, 100.0, size=100_000)
    want = sps.t.interval(0.95, x.size - 1, loc=x.mean(), scale=sps.sem(x))
    got = t_interval_from_sums(x.size, float(x.sum()), float((x * x).sum()))
    # the documented tolerance of the uncentred sums for 0..100 scores
    assert got.low == pytest.approx(want[0], rel=1e-12)
    assert got.high == pytest.approx(want[1], rel=1e-12)


def test_from_sums_with_a_shift_keeps_digits_the_plain_sums_lose() -> None:
    # values far from 0 with a small spread: x*x sums cancel badly unless shifted
    x = 1e6 + np.random.default_rng(4).normal(0.0, 0.01, size=10_000)
    want = sps.t.interval(0.95, x.size - 1, loc=x.mean(), scale=sps.sem(x))
    d = x - x[0]
    got = t_interval_from_sums(x.size, float(d.sum()), float((d * d).sum()), shift=float(x[0]))
    width = want[1] - want[0]
    assert got.high - got.low == pytest.approx(width, rel=1e-9)
    assert got.low == pytest.approx(want[0], abs=width * 1e-9)


def test_one_value_or_no_spread_is_the_mean_alone() -> None:
    assert t_interval([0.4]).low == t_interval([0.4]).high == 0.4
    same = t_interval_from_moments(50, 0.5, 0.0)
    assert (same.low, same.high) == (0.5, 0.5)
    # rounding that makes the variance a hair negative is no spread, not an error
    assert t_interval_from_sums(3, 3.0, 3.0 - 1e-15).low == 1.0


def test_paired_t_is_student_t_on_differences() -> None:
    rng = np.random.default_rng(5)
    b = rng.uniform(0, 1, size=300)
    c = np.clip(b + rng.normal(0.02, 0.1, size=300), 0, 1)
    d = c - b
    want = sps.t.interval(0.9, d.size - 1, loc=d.mean(), scale=sps.sem(d))
    got = paired_t_interval(b, c, confidence=0.9)
    assert got.estimate == pytest.approx(c.mean() - b.mean(), rel=1e-15)
    assert (got.low, got.high) == pytest.approx(want, rel=1e-12)
    # and the one-sided t-test's bound at alpha = (1 - confidence) / 2 is its lower end
    res = sps.ttest_1samp(d, 0.0, alternative="greater")
    assert res.confidence_interval(0.95).low == pytest.approx(got.low, rel=1e-12)


def test_wilson_matches_scipy() -> None:
    for k, n in ((8, 10), (0, 20_000), (137, 20_000), (19_999, 20_000)):
        want = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        got = wilson_interval(k, n)
        assert got.low == pytest.approx(want.low, abs=1e-12)
        assert got.high == pytest.approx(want.high, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: t_interval_from_moments(0, 1.0, 1.0), "n must be"),
        (lambda: t_interval_from_moments(True, 1.0, 1.0), "n must be"),  # type: ignore[arg-type]
        (lambda: t_interval_from_moments(5, 1.0, -1.0), "sd >= 0"),
        (lambda: t_interval_from_moments(5, math.nan, 1.0), "finite"),
        (lambda: t_interval_from_moments(5, 1.0, 1.0, confidence=1.0), "confidence"),
        (lambda: t_interval_from_sums(5, math.inf, 1.0), "finite"),
        (lambda: t_interval([]), "at least one"),
        (lambda: paired_t_interval([1.0], [1.0, 2.0]), "same non-zero length"),
    ],
)
def test_bad_arguments_are_config_errors(call: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        call()  # type: ignore[operator]
