"""Descriptive summaries of a list of numbers: sample standard deviation, quantiles, histogram."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from aieval.errors import ConfigError

__all__ = ["QUANTILE_POINTS", "histogram", "quantiles", "sample_std"]

#: The points :func:`quantiles` reports, by name.
QUANTILE_POINTS: tuple[tuple[str, float], ...] = (
    ("min", 0.0),
    ("p10", 0.10),
    ("p25", 0.25),
    ("p50", 0.50),
    ("p75", 0.75),
    ("p90", 0.90),
    ("max", 1.0),
)


def sample_std(values: Sequence[float] | np.ndarray) -> float | None:
    """Sample standard deviation (``ddof=1``); ``None`` with fewer than two values.

    Example:
        >>> round(sample_std([1.0, 2.0, 3.0, 4.0]), 4)
        1.291
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    return float(np.std(data, ddof=1))


def quantiles(values: Sequence[float] | np.ndarray) -> dict[str, float] | None:
    """Min, p10, p25, median, p75, p90 and max (linear interpolation); ``None`` when empty.

    Example:
        >>> quantiles([0.0, 1.0])["p50"]
        0.5
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    points = np.quantile(data, [q for _, q in QUANTILE_POINTS])
    return {name: float(v) for (name, _), v in zip(QUANTILE_POINTS, points, strict=True)}


def histogram(
    values: Sequence[float] | np.ndarray,
    *,
    bins: int = 10,
    range: tuple[float, float] = (0.0, 1.0),
) -> dict[str, list[float] | list[int]]:
    """Counts in ``bins`` equal-width bins over ``range`` (the last bin includes its right edge).

    Values outside ``range`` are not counted, as in :func:`numpy.histogram`.

    Example:
        >>> histogram([0.05, 0.5, 1.0], bins=2)["counts"]
        [1, 2]
    """
    if bins < 1:
        raise ConfigError(f"histogram: bins must be >= 1, got {bins}")
    low, high = range
    if not high > low:
        raise ConfigError(f"histogram: range must be (low, high) with low < high, got {range!r}")
    counts, edges = np.histogram(np.asarray(values, dtype=float), bins=bins, range=(low, high))
    # Rounding hides float noise in the edges (0.30000000000000004) without moving a count.
    return {"edges": [round(float(e), 12) for e in edges], "counts": [int(c) for c in counts]}
