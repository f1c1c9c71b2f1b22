"""Paired score models for the promotion simulation (``bench/promotion.py`` and its seeded
small version in ``tests/report/test_promotion_simulation.py``).

Every model draws ``n`` examples of a baseline and a candidate on the 0..100 weighted-score
scale whose true mean difference (candidate - baseline) is ``shift`` points:

- ``symmetric``: latent quality ``q ~ N(70, 15)``, each version adds ``N(0, 4)`` noise.
- ``sparse``: 70% of examples are identical; the other 30% move by ``N(shift / 0.3, 12)``.
- ``skewed``: 5% of examples drop 20-80 points (uniform); the rest gain ``N(g, 3)`` with ``g``
  set so that the mean difference is ``shift``.
- ``binary``: a 0/1 metric, baseline accuracy 70%, 10% discordant pairs (scores 0 or 100).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["MODELS", "Model"]

Model = Callable[[np.random.Generator, int, float], tuple[np.ndarray, np.ndarray]]


def symmetric(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian per-example differences (sd about 5.7 points)."""
    quality = rng.normal(70, 15, size=n)
    return quality + rng.normal(0, 4, size=n), quality + shift + rng.normal(0, 4, size=n)


def sparse(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Most examples unchanged, a minority moved (a prompt change flipping some answers)."""
    base = rng.normal(70, 15, size=n)
    moved = rng.random(n) < 0.3
    return base, base + np.where(moved, rng.normal(shift / 0.3, 12, size=n), 0.0)


def skewed(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """A few examples regress a lot while the rest improve a little."""
    base = rng.normal(70, 15, size=n)
    dropped = rng.random(n) < 0.05
    gain = (shift + 0.05 * 50.0) / 0.95
    diff = np.where(dropped, -rng.uniform(20, 80, size=n), rng.normal(gain, 3, size=n))
    return base, base + diff


def binary(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """A 0/1 metric: 70% baseline accuracy, 10% of pairs discordant."""
    p_win = (0.10 + shift / 100.0) / 2.0
    p_loss = 0.10 - p_win
    p_both = 0.70 - p_loss
    cell = rng.choice(4, size=n, p=[p_both, p_loss, p_win, 1.0 - p_both - p_loss - p_win])
    base = np.isin(cell, (0, 1)).astype(float) * 100.0
    cand = np.isin(cell, (0, 2)).astype(float) * 100.0
    return base, cand


MODELS: dict[str, Model] = {
    "symmetric": symmetric,
    "sparse": sparse,
    "skewed": skewed,
    "binary": binary,
}
