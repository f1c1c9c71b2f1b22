"""The share of the weights shown beside a weighted score never rounds a partial cover to all
or nothing."""

from __future__ import annotations

import pytest

from aieval.grading import coverage_percent


@pytest.mark.parametrize(
    ("share", "shown"),
    [
        (1.0, "100%"),
        (0.1, "10%"),
        (0.8, "80%"),
        (0.55, "55%"),
        (0.9996, "99.96%"),  # not "100%": one criterion is still unscored
        (0.99999, "99.999%"),
        (0.00001, "0.001%"),  # not "0%": one criterion is scored
        (0.0, "0%"),
    ],
)
def test_coverage_percent(share: float, shown: str) -> None:
    assert coverage_percent(share) == shown
