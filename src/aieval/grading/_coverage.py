"""How a share of the weights is shown beside a weighted score that covers only part of them."""

from __future__ import annotations

__all__ = ["coverage_percent"]


def coverage_percent(share: float) -> str:
    """A share (0..1) of the weights as a percentage that never rounds a partial cover up to
    100% or down to 0% (a score over 99.96% of the weights is not a score over all of them).

    >>> coverage_percent(0.1), coverage_percent(0.9996), coverage_percent(1.0)
    ('10%', '99.96%', '100%')
    """
    for digits in range(10):
        text = f"{share * 100:.{digits}f}"
        if (float(text) < 100 or share >= 1) and (float(text) > 0 or share <= 0):
            return f"{text}%"
    return "under 100%" if share > 0.5 else "over 0%"  # closer to either than 10 digits show
