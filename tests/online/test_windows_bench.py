"""bench/online_alerts.py on a few simulated weeks (cheap): its windows hold the traffic and
passes it drew, its per-week figures are counts over weeks with an exact Poisson interval, and
a drop of 0.2 at 400 traces an hour is caught within six hours."""

from __future__ import annotations

import math

import numpy as np
from bench.online_alerts import WEEK, detection, per_week, stationary, traffic, windows
from scipy import stats

from aieval.online import AlertPolicy


def test_the_windows_hold_what_was_drawn() -> None:
    rng = np.random.default_rng(1)
    counts = traffic(WEEK, 100, rng)
    assert counts.shape == (WEEK,) and abs(counts.mean() - 100) < 5
    sim = windows(counts, np.full(WEEK, 0.8), rng, "mean")
    assert [w.scored for w in sim] == counts.tolist()
    scored, passed = sum(w.scored for w in sim), sum(w.passed for w in sim)
    assert abs(passed / scored - 0.8) < 0.02
    busy = [w for w in sim if w.scored > 1]
    assert all(w.pass_rate is not None and w.means["judge"].n == w.scored for w in busy)


def test_per_week_is_a_count_over_weeks_with_its_exact_interval() -> None:
    rate, low, high = per_week(6, 3)
    assert rate == 2.0
    assert math.isclose(low * 3, stats.chi2.ppf(0.025, 12) / 2)
    assert math.isclose(high * 3, stats.chi2.ppf(0.975, 14) / 2)
    assert per_week(0, 10)[1] == 0.0


def test_a_few_stationary_weeks_and_a_drop() -> None:
    rows = stationary(AlertPolicy(), 2, 0.05, 0, ("pass_rate",))
    assert len(rows) == 9 and all(r.weeks == 2 for r in rows)
    assert all(min(r.floor, r.previous, r.fixed) >= 0 for r in rows)
    found = detection(AlertPolicy(), 400, 0.8, 0.2, 0.05, 5, 0)
    within_6h, within_24h, median = found["floor"]
    assert within_6h == within_24h == 1.0 and median is not None and median <= 6
