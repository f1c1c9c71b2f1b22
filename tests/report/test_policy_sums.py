"""The promotion decision from sums (``ScoreSums``, ``PassCounts``) equals the decision from
the per-example arrays wherever the method is a closed form."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.support.close import differences

from aieval.report._evidence import Coverage, PassCounts, PassValues
from aieval.report._policy import DecisionInputs, PromotionPolicy, decide
from aieval.report._policy_inputs import ScoreSums
from aieval.stats import (
    noninferiority_from_counts,
    noninferiority_from_moments,
    noninferiority_test,
)


def _inputs(b: np.ndarray, c: np.ndarray, pb: np.ndarray, pc: np.ndarray, sums: bool) -> Any:
    cover = Coverage(b.size, [], [], c.size)
    if not sums:
        passes: PassValues | PassCounts = PassValues(
            pb.tolist(), pc.tolist(), int(np.sum((pb == 1) & (pc == 0))),
            int(np.sum((pb == 0) & (pc == 1))), False,
        )  # fmt: skip
        return DecisionInputs(cover, b.size, b, c, passes)
    d = c - b
    binary = bool(np.all(np.isin(b, (0.0, 100.0))) and np.all(np.isin(c, (0.0, 100.0))))
    score = ScoreSums(
        b.size, float(d.sum()), float((d * d).sum()),
        int(np.sum(d > 0)) if binary else None, int(np.sum(d < 0)) if binary else None,
    )  # fmt: skip
    table = PassCounts(
        pb.size, int(np.sum((pb == 1) & (pc == 1))), int(np.sum((pb == 1) & (pc == 0))),
        int(np.sum((pb == 0) & (pc == 1))),
    )  # fmt: skip
    return DecisionInputs(cover, b.size, np.empty(0), np.empty(0), table, score_sums=score)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("shift", [-3.0, 0.0, 2.0])
def test_decision_from_sums_equals_the_arrays(binary: bool, shift: float) -> None:
    rng = np.random.default_rng(7)
    n = 400
    if binary:
        b = 100.0 * (rng.random(n) < 0.7)
        c = 100.0 * (rng.random(n) < 0.7 + shift / 100.0)
    else:
        b = np.clip(rng.normal(70, 15, n), 0, 100)
        c = np.clip(b + rng.normal(shift, 6, n), 0, 100)
    pb, pc = (b >= 50).astype(float), (c >= 50).astype(float)
    policy = PromotionPolicy(bootstrap_max_n=100)
    arrays = decide(_inputs(b, c, pb, pc, sums=False), policy).to_dict()
    sums = decide(_inputs(b, c, pb, pc, sums=True), policy).to_dict()
    assert differences(sums, arrays) == []


def test_sums_refuse_the_bootstrap() -> None:
    """Below ``bootstrap_max_n`` the studentized bootstrap needs the values: sums say so."""
    from aieval.errors import ConfigError
    from aieval.report._policy_stats import score_sums_test

    with pytest.raises(ConfigError, match="needs the scores"):
        score_sums_test(ScoreSums(10, 1.0, 4.0), PromotionPolicy())


def test_moments_and_counts_equal_the_arrays() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.5, 2.0, 500)
    a = noninferiority_test(d, margin=1.0, method="t").to_dict()
    m = noninferiority_from_moments(500, float(d.mean()), float(d.std(ddof=1)), margin=1.0)
    assert differences(m.to_dict(), a) == []
    o = rng.choice([-1.0, 0.0, 1.0], 300, p=[0.1, 0.75, 0.15])
    p = noninferiority_test(100 * o, margin=5.0, method="proportion", scale=100.0).to_dict()
    q = noninferiority_from_counts(
        int(np.sum(o > 0)), int(np.sum(o < 0)), 300, margin=5.0, scale=100.0
    )
    assert differences(q.to_dict(), p) == []
