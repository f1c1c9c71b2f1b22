"""Operating characteristics of the promotion decision, simulated over many seeds.

Score model (paired, realistic spread): example ``i`` has a latent quality
``q_i ~ N(70, 15)`` on the 0..100 weighted-score scale. The baseline scores ``q_i + e_i``; the
candidate scores ``q_i + shift + e'_i``, with independent version noise ``e, e' ~ N(0, 4)``, so
per-example differences have a standard deviation near 5.7 points. A second, heavier-tailed model
leaves 70% of examples unchanged (difference 0) and moves the other 30% by
``N(shift / 0.3, 12)``, as when a prompt change flips a minority of answers.

With the default policy (margin 1.0 point, alpha 0.05) and n = 500 paired examples:

- a candidate truly worse by exactly the margin (``shift = -1``) must be promoted at most at
  rate alpha, up to Monte-Carlo error (3 standard errors);
- a candidate equal to the baseline (``shift = 0``) must be promoted at least 90% of the time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from aieval.report import ExampleNumbers, PromotionPolicy, decide_promotion
from aieval.stats import noninferiority_test

N = 500
TRIALS = 4000
CHECKED = 40  # trials also run through decide_promotion, which must agree with the test
POLICY = PromotionPolicy()

Model = Callable[[np.random.Generator, float], tuple[np.ndarray, np.ndarray]]


def gaussian(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray]:
    quality = rng.normal(70, 15, size=N)
    return quality + rng.normal(0, 4, size=N), quality + shift + rng.normal(0, 4, size=N)


def sparse_changes(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray]:
    base = rng.normal(70, 15, size=N)
    moved = rng.random(N) < 0.3
    diff = np.where(moved, rng.normal(shift / 0.3, 12, size=N), 0.0)
    return base, base + diff


def _examples(scores: np.ndarray) -> list[ExampleNumbers]:
    return [
        ExampleNumbers(id=str(i), passed=True, weighted_score=float(v))
        for i, v in enumerate(scores)
    ]


def promotion_rate(model: Model, shift: float, seed: int) -> float:
    """Share of simulated candidates promoted. Only the weighted-score rule has anything to
    check on these examples, so the decision is the non-inferiority test's verdict: the first
    trials go through :func:`decide_promotion` to confirm it, the rest through the test alone."""
    rng = np.random.default_rng(seed)
    promoted = 0
    for trial in range(TRIALS):
        b, c = model(rng, shift)
        verdict = noninferiority_test(
            c - b, margin=POLICY.noninferiority_margin, alpha=POLICY.alpha
        ).non_inferior
        if trial < CHECKED:
            assert decide_promotion(_examples(b), _examples(c), POLICY).promote is verdict
        promoted += verdict
    return promoted / TRIALS


@pytest.mark.parametrize(
    "model", [pytest.param(gaussian, id="gaussian"), pytest.param(sparse_changes, id="sparse")]
)
def test_worse_by_the_margin_is_promoted_at_most_at_alpha(model: Model) -> None:
    rate = promotion_rate(model, -POLICY.noninferiority_margin, seed=1)
    se = math.sqrt(POLICY.alpha * (1 - POLICY.alpha) / TRIALS)
    assert rate <= POLICY.alpha + 3 * se


@pytest.mark.parametrize(
    "model", [pytest.param(gaussian, id="gaussian"), pytest.param(sparse_changes, id="sparse")]
)
def test_equal_candidate_is_promoted_with_high_power(model: Model) -> None:
    assert promotion_rate(model, 0.0, seed=2) >= 0.9
