from fractions import Fraction
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.errors import ConfigError
from aieval.stats import mean_pass_at_k, pass_at_k, pass_at_k_from_outcomes


def reference(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


@st.composite
def counts(draw: st.DrawFn, max_n: int = 60) -> tuple[int, int, int]:
    n = draw(st.integers(1, max_n))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@given(counts())
def test_matches_exact_formula(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(float(reference(n, c, k)), abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        pytest.param(200, 13, 10, id="codex-example"),
        pytest.param(1000, 1, 1, id="rare-pass"),
        pytest.param(5000, 17, 100, id="large-n"),
        pytest.param(3000, 2999, 1, id="almost-all"),
    ],
)
def test_large_counts_match_exact_fraction(n: int, c: int, k: int) -> None:
    assert pass_at_k(n=n, c=c, k=k) == pytest.approx(float(reference(n, c, k)), rel=1e-9)


@given(counts(max_n=40))
def test_monotone_in_k_and_c(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    if k < n:
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - 1e-12
    if c < n:
        assert pass_at_k(n, c + 1, k) >= pass_at_k(n, c, k) - 1e-12


def test_k_one_is_pass_rate() -> None:
    assert pass_at_k(n=8, c=3, k=1) == pytest.approx(3 / 8)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        pytest.param(5, 6, 1, id="c-above-n"),
        pytest.param(5, 1, 6, id="k-above-n"),
        pytest.param(5, 1, 0, id="k-zero"),
        pytest.param(-1, 0, 1, id="negative"),
    ],
)
def test_invalid_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ConfigError, match="pass_at_k"):
        pass_at_k(n, c, k)


@given(st.lists(counts(max_n=20), min_size=1, max_size=10), st.integers(1, 3))
def test_aggregate_is_mean_of_problems(problems: list[tuple[int, int, int]], k: int) -> None:
    pairs = [(max(n, k), c) for n, c, _ in problems]
    want = sum(float(reference(n, c, k)) for n, c in pairs) / len(pairs)
    assert mean_pass_at_k(pairs, k) == pytest.approx(want, abs=1e-12)
    outcomes = [[i < c for i in range(n)] for n, c in pairs]
    assert pass_at_k_from_outcomes(outcomes, k) == pytest.approx(want, abs=1e-12)


def test_aggregate_needs_problems() -> None:
    with pytest.raises(ConfigError):
        mean_pass_at_k([], k=1)
