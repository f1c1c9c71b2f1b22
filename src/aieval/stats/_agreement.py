"""Agreement between two raters: exact agreement, Cohen's kappa, Spearman's rho, MAE."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from aieval.errors import ConfigError

__all__ = ["cohen_kappa", "exact_agreement", "mean_absolute_error", "spearman"]


def _paired(a: Sequence[object], b: Sequence[object], what: str) -> int:
    if len(a) != len(b):
        raise ConfigError(f"{what}: the two raters have {len(a)} and {len(b)} ratings; pair them")
    if not a:
        raise ConfigError(f"{what}: needs at least one pair of ratings")
    return len(a)


def exact_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Share of items on which both raters gave the same label.

    Example:
        >>> exact_agreement([1, 2, 3, 4], [1, 2, 3, 5])
        0.75
    """
    n = _paired(a, b, "exact_agreement")
    return sum(x == y for x, y in zip(a, b, strict=True)) / n


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    labels: Sequence[Hashable] | None = None,
    zero_division: float = 0.0,
) -> float:
    """Cohen's kappa: agreement corrected for chance, 1 is perfect, 0 is chance level.

    With ``weights`` the labels are ordinal (in ``labels`` order, else sorted) and a
    disagreement costs its distance (``linear``) or squared distance (``quadratic``).

    Args:
        a: the first rater's labels.
        b: the second rater's labels, item by item.
        weights: ``None`` for nominal labels, or ``"linear"`` / ``"quadratic"``.
        labels: every possible label in scale order; defaults to the labels seen, sorted.
        zero_division: returned when chance disagreement is zero (both raters always give the
            same single label), where kappa is undefined.

    Example:
        >>> round(cohen_kappa([1, 1, 2, 2], [1, 2, 2, 2]), 3)
        0.5
    """
    _paired(a, b, "cohen_kappa")
    scale = list(labels) if labels is not None else sorted(set(a) | set(b), key=_sort_key)
    index = {label: i for i, label in enumerate(scale)}
    unknown = [x for x in (*a, *b) if x not in index]
    if unknown:
        raise ConfigError(f"cohen_kappa: label {unknown[0]!r} is not in labels={scale!r}")
    k = len(scale)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    if weights is None:
        cost = (grid > 0).astype(float)
    elif weights == "linear":
        cost = grid
    elif weights == "quadratic":
        cost = grid**2
    else:
        raise ConfigError(
            f"cohen_kappa: weights must be None, 'linear' or 'quadratic', not {weights!r}"
        )
    chance = float((cost * expected).sum())
    if chance == 0.0:
        return zero_division
    return 1.0 - float((cost * observed).sum()) / chance


def spearman(x: Sequence[float], y: Sequence[float], *, zero_division: float = 0.0) -> float:
    """Spearman's rank correlation (ties get average ranks), in -1..1.

    Args:
        x: first variable.
        y: second variable, item by item.
        zero_division: returned when either variable is constant, where rho is undefined.

    Example:
        >>> round(spearman([1, 2, 3, 4], [10, 20, 30, 35]), 6)
        1.0
    """
    _paired(x, y, "spearman")
    rx, ry = _ranks(np.asarray(x, dtype=float)), _ranks(np.asarray(y, dtype=float))
    sx, sy = rx.std(), ry.std()
    if sx == 0.0 or sy == 0.0 or len(rx) < 2:
        return zero_division
    rho = float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))
    return max(-1.0, min(1.0, rho))


def mean_absolute_error(x: Sequence[float], y: Sequence[float]) -> float:
    """Mean of ``|x - y|`` over the pairs (lower is better).

    Example:
        >>> mean_absolute_error([1, 2, 3], [1, 3, 5])
        1.0
    """
    n = _paired(x, y, "mean_absolute_error")
    return sum(abs(float(p) - float(q)) for p, q in zip(x, y, strict=True)) / n


def _ranks(values: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        raise ConfigError("spearman: values must be finite numbers")
    from scipy.stats import rankdata

    ranked: np.ndarray = rankdata(values, method="average")
    return ranked


def _sort_key(label: Hashable) -> tuple[int, float, str]:
    if isinstance(label, bool):
        return (1, 0.0, repr(label))
    if isinstance(label, int | float) and not math.isnan(label):
        return (0, float(label), "")
    return (1, 0.0, str(label))
