"""Window summaries of a rule read from real stored runs (both backends) equal the figures
computed from the samples themselves (scipy's Wilson and t intervals as the oracle)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from tests.online.windows_support import HOUR, T0, add_window

from aieval import Store
from aieval.online import OnlineRule, window_run_name
from aieval.online._windows import window_summaries


def wilson(k: int, n: int) -> tuple[float, float]:
    z = stats.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_window_figures_equal_those_of_the_samples(store_location: str) -> None:
    store = Store(store_location)
    outcomes = [[True] * 30 + [False] * 10, [True, False] * 13, [True] * 5]
    ids = [add_window(store, "qa", T0 + i * HOUR, right) for i, right in enumerate(outcomes)]
    add_window(store, "other", T0, [False] * 4)
    rule = OnlineRule(name="qa")

    found = window_summaries(store, rule)
    assert [s.run_id for s in found] == ids
    for summary, right in zip(found, outcomes, strict=True):
        n, k = len(right), sum(right)
        assert (summary.scored, summary.passed) == (n, k)
        assert summary.run_name == store.get_run(summary.run_id).name
        assert summary.pass_rate is not None
        low, high = wilson(k, n)
        assert math.isclose(summary.pass_rate.low, low, abs_tol=1e-12)
        assert math.isclose(summary.pass_rate.high, high, abs_tol=1e-12)
        values = np.array([1.0 if ok else 0.0 for ok in right])
        mean = summary.means["exact_match"]
        assert mean.n == n and math.isclose(mean.mean, values.mean())
        if values.std() > 0:
            expect = stats.t.interval(0.95, n - 1, loc=values.mean(), scale=stats.sem(values))
            assert math.isclose(mean.interval.low, expect[0], rel_tol=1e-9)
            assert math.isclose(mean.interval.high, expect[1], rel_tol=1e-9)
        else:
            assert mean.interval.low == mean.interval.high == 1.0
    # since/until select windows by their start
    later = window_summaries(store, rule, since=T0 + HOUR, until=T0 + 2 * HOUR)
    assert [s.run_id for s in later] == ids[1:2]
    assert later[0].label == window_run_name("qa", T0 + HOUR, "hour").rsplit("/", 1)[-1]
    store.close()
