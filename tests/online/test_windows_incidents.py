"""Which windows make an incident (pure): floor streaks keyed by their first window, windows
too small to count neither extend nor break a streak, and the baseline tests' p-values equal
scipy's (a 2x2 chi-square without correction; Welch's t from the moments)."""

from __future__ import annotations

import math

from scipy import stats

from aieval.online import AlertPolicy, window_run_name
from aieval.online._incidents import Figure, incidents, one_sided_p
from aieval.online._windows import MeanScore, WindowSummary
from aieval.stats import t_interval_from_moments, wilson_interval

HOUR = 3600.0
T0 = 1_780_002_000.0 - 1_780_002_000.0 % HOUR


def window(i: int, passed: int, scored: int, *, closed: bool = True) -> WindowSummary:
    start = T0 + i * HOUR
    return WindowSummary(
        rule="qa",
        start=start,
        end=start + HOUR,
        run_id=f"run{i}",
        run_name=window_run_name("qa", start, "hour"),
        closed=closed,
        scored=scored,
        passed=passed,
        pass_rate=wilson_interval(passed, scored) if scored else None,
    )


def test_a_streak_is_one_incident_keyed_by_its_first_window() -> None:
    policy = AlertPolicy(floor=0.8, consecutive=3, min_samples=20)
    good, bad, small = (95, 100), (50, 100), (0, 5)
    shape = [good, bad, bad, small, bad, bad, bad, good, bad, bad, good, bad, bad, bad]
    windows = [window(i, *s) for i, s in enumerate(shape)]
    found = incidents(windows, policy)
    assert [(i.key, [w.run_id for w in i.windows]) for i in found] == [
        (f"floor/pass_rate/{windows[1].label}", ["run1", "run2", "run4", "run5", "run6"]),
        (f"floor/pass_rate/{windows[11].label}", ["run11", "run12", "run13"]),
    ]
    # the streak going on in later windows keeps its key: one incident, not a new one
    longer = incidents([*windows, window(14, *bad)], policy)
    assert [i.key for i in longer] == [i.key for i in found]
    # an open window does not count yet
    assert incidents([*windows[:3], window(3, *bad, closed=False)], policy) == []


def test_the_pass_rate_test_is_the_two_by_two_chi_square() -> None:
    base = Figure(120, wilson_interval(96, 120), successes=96)
    worse = Figure(80, wilson_interval(52, 80), successes=52)
    _, p, _, _ = stats.chi2_contingency([[96, 24], [52, 28]], correction=False)
    assert math.isclose(one_sided_p(base, worse), p / 2, rel_tol=1e-9)
    assert math.isclose(one_sided_p(worse, base), 1 - p / 2, rel_tol=1e-9)


def test_the_mean_test_is_welchs() -> None:
    a = Figure(30, t_interval_from_moments(30, 0.82, 0.1), sd=0.1)
    b = Figure(12, t_interval_from_moments(12, 0.74, 0.2), sd=0.2)
    expect = stats.ttest_ind_from_stats(0.82, 0.1, 30, 0.74, 0.2, 12, equal_var=False)
    assert math.isclose(one_sided_p(a, b), expect.pvalue / 2, rel_tol=1e-9)


def test_a_window_worse_than_the_baseline_is_one_incident() -> None:
    windows = [window(0, 90, 100), window(1, 88, 100), window(2, 60, 100), window(3, 62, 100)]
    previous = incidents(windows, AlertPolicy(baseline="previous", alpha=0.001))
    assert [(i.key, i.baseline and i.baseline.run_id) for i in previous] == [
        (f"baseline/pass_rate/{windows[2].label}", "run1")
    ]
    # worse in two windows in a row: one incident; back to normal, then worse again: another
    windows += [window(4, 91, 100), window(5, 61, 100)]
    named = incidents(windows, AlertPolicy(baseline=windows[0].label, alpha=0.001))
    assert [i.windows[0].run_id for i in named] == ["run2", "run5"]
    assert all(i.p_value is not None and i.p_value < 0.001 for i in named)


def test_a_mean_policy_watches_its_scorer() -> None:
    def with_mean(i: int, mean: float) -> WindowSummary:
        base = window(i, 50, 50)
        ci = t_interval_from_moments(50, mean, 0.05)
        score = MeanScore("judge", 50, mean, 0.05, ci)
        return WindowSummary(**{**_fields(base), "means": {"judge": score}})

    windows = [with_mean(0, 0.9), with_mean(1, 0.5), with_mean(2, 0.5)]
    found = incidents(windows, AlertPolicy(metric="mean", floor=0.6, consecutive=2))
    assert [i.key for i in found] == [f"floor/mean:judge/{windows[1].label}"]


def _fields(summary: WindowSummary) -> dict[str, object]:
    return {name: getattr(summary, name) for name in WindowSummary.__slots__}
