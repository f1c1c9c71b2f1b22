"""at_least / at_most: a metric equal to its floor up to float rounding meets it, and only then."""

from __future__ import annotations

import doctest
import math

import pytest

import aieval._floors
from aieval._floors import FLOOR_ABS_TOL, FLOOR_REL_TOL
from aieval.stats import at_least, at_most

TEN_TENTHS = sum([0.1] * 10) / 10  # 0.09999999999999999


def test_the_0_1_floor_is_met_by_ten_scores_of_0_1() -> None:
    assert TEN_TENTHS < 0.1, "float rounding puts the mean below 0.1"
    assert at_least(TEN_TENTHS, 0.1)
    assert at_least(0.1, 0.1) and at_least(0.2, 0.1)


@pytest.mark.parametrize("below", [0.0999, 0.1 - 1e-6, 0.1 * (1 - 10 * FLOOR_REL_TOL)])
def test_a_value_truly_below_the_floor_fails(below: float) -> None:
    assert not at_least(below, 0.1)


def test_ceilings_mirror_floors() -> None:
    assert 0.07 - 0.05 > 0.02 and at_most(0.07 - 0.05, 0.02)
    assert not at_most(0.0201, 0.02)
    assert at_most(0.0, 0.0) and at_most(1e-15, 0.0) and not at_most(FLOOR_ABS_TOL * 10, 0.0)


def test_nan_meets_nothing_and_infinities_compare_as_numbers() -> None:
    assert not at_least(math.nan, 0.0) and not at_most(math.nan, 1.0)
    assert at_least(math.inf, 1.0) and not at_least(-math.inf, 0.0)


def test_the_tolerance_is_tiny_and_documented() -> None:
    assert FLOOR_REL_TOL == 1e-9 and FLOOR_ABS_TOL == 1e-12
    assert "FLOOR_REL_TOL" in (aieval._floors.__doc__ or "")


def test_doc_examples() -> None:
    failed, tried = doctest.testmod(aieval._floors)
    assert tried >= 4 and failed == 0
