import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from tests.support.oracles import cohen_kappa_score

from aieval.errors import ConfigError
from aieval.stats import (
    bootstrap_ci,
    cohen_kappa,
    exact_agreement,
    mean_absolute_error,
    spearman,
    wilson_interval,
)

pairs = st.integers(min_value=2, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 5), min_size=n, max_size=n),
        st.lists(st.integers(1, 5), min_size=n, max_size=n),
    )
)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@settings(max_examples=60, deadline=None)
@given(data=pairs)
def test_kappa_matches_sklearn(weights: str | None, data: tuple[list[int], list[int]]) -> None:
    a, b = data
    labels = [1, 2, 3, 4, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = cohen_kappa_score(a, b, weights=weights, labels=labels)
    ours = cohen_kappa(a, b, weights=weights, labels=labels, zero_division=-99.0)  # type: ignore[arg-type]
    if math.isnan(oracle):
        assert ours == -99.0
    else:
        assert ours == pytest.approx(oracle, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(data=pairs)
def test_spearman_matches_scipy(data: tuple[list[int], list[int]]) -> None:
    x, y = data
    if len(set(x)) < 2 or len(set(y)) < 2:
        assert spearman(x, y, zero_division=-5.0) == -5.0
        return
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-9)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param([1, 2, 3], [1, 2, 3], 1.0, id="all"),
        pytest.param([1, 2, 3], [3, 1, 2], 0.0, id="none"),
        pytest.param(["a", "b"], ["a", "a"], 0.5, id="labels"),
    ],
)
def test_exact_agreement(a: list[object], b: list[object], expected: float) -> None:
    assert exact_agreement(a, b) == expected  # type: ignore[arg-type]


def test_mae_and_mismatched_lengths() -> None:
    assert mean_absolute_error([0.0, 1.0], [0.5, 0.0]) == pytest.approx(0.75)
    with pytest.raises(ConfigError, match="pair them"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ConfigError, match="not in labels"):
        cohen_kappa([1, 7], [1, 2], labels=[1, 2])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=30), st.integers(0, 1000))
def test_bootstrap_interval_brackets_estimate_and_is_reproducible(
    values: list[float], seed: int
) -> None:
    def mean(x: list[float]) -> float:
        return sum(x) / len(x)

    ci = bootstrap_ci(mean, values, n_resamples=200, seed=seed)
    assert min(values) - 1e-9 <= ci.low <= ci.high <= max(values) + 1e-9
    assert ci.estimate == pytest.approx(mean(values))
    assert bootstrap_ci(mean, values, n_resamples=200, seed=seed) == ci


def test_bootstrap_keeps_pairs_together() -> None:
    x = list(range(30))
    ci = bootstrap_ci(lambda a, b: spearman(a, b), x, [2 * v for v in x], n_resamples=100)
    assert ci.low == pytest.approx(1.0) and ci.high == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("k", "n"),
    [
        pytest.param(0, 10, id="zero"),
        pytest.param(8, 10, id="8of10"),
        pytest.param(50, 50, id="all"),
    ],
)
def test_wilson_matches_statsmodels_formula(k: int, n: int) -> None:
    from scipy.stats import binomtest

    ci = wilson_interval(k, n)
    oracle = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ci.low == pytest.approx(oracle.low, abs=1e-9)
    assert ci.high == pytest.approx(oracle.high, abs=1e-9)
