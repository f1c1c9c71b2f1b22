"""Which windows of a rule make an alert incident (pure: summaries in, incidents out).

- **floor**: the metric's interval's upper bound is below the policy's floor in ``consecutive``
  closed windows in a row. One incident per streak, keyed by the streak's first window, so a
  streak that goes on is still one incident; the streak ends at the first counted window whose
  upper bound is at or above the floor.
- **baseline**: a closed window is worse than the baseline window (the previous counted window,
  or the one named) at level ``alpha``: a one-sided pooled two-proportion z test for the pass
  rate, Welch's one-sided t test for a mean. Keyed by the window; the counted windows right
  after it that are worse too belong to the same incident (a drop that goes on alerts once, and
  a baseline window that happened to be lucky does not alert every hour after it).

A window counts when it is closed and holds at least ``min_samples`` values of the metric. A
window that does not count (too few samples, an hour without traffic) neither extends nor breaks
a streak: a quiet night between two bad hours does not hide a sustained drop, and a handful of
samples, whose interval is wide, decides nothing either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from aieval.online._model import AlertPolicy
from aieval.online._windows import WindowSummary
from aieval.stats import ConfidenceInterval

__all__ = ["Figure", "Incident", "IncidentKind", "figure", "incidents", "one_sided_p"]

IncidentKind = Literal["floor", "baseline"]


@dataclass(frozen=True, slots=True)
class Figure:
    """A window's metric: ``n`` values, its estimate with interval, and the spread a test needs
    (the sample sd of a mean; for a pass rate, the successes are ``estimate * n``)."""

    n: int
    interval: ConfidenceInterval
    sd: float | None = None
    successes: int | None = None


@dataclass(frozen=True, slots=True)
class Incident:
    """One alert incident of a rule.

    Attributes:
        key: unique per rule and incident (``floor/<metric>/<first window>``,
            ``baseline/<metric>/<window>``); the webhook's ``Idempotency-Key``.
        metric: ``pass_rate`` or ``mean:<scorer>``.
        windows: the streak's windows (floor), or the window found worse (baseline).
        baseline: the window it was compared with (baseline incidents only).
        p_value: the test's one-sided p-value (baseline incidents only).
    """

    rule: str
    key: str
    kind: IncidentKind
    metric: str
    windows: tuple[WindowSummary, ...]
    baseline: WindowSummary | None = None
    p_value: float | None = None


def figure(summary: WindowSummary, metric: str) -> Figure | None:
    """``summary``'s ``metric`` (``pass_rate`` or ``mean:<scorer>``); ``None`` without values."""
    if metric == "pass_rate":
        if summary.pass_rate is None:
            return None
        return Figure(summary.scored, summary.pass_rate, successes=summary.passed)
    mean = summary.means.get(metric.removeprefix("mean:"))
    return None if mean is None else Figure(mean.n, mean.interval, sd=mean.sd)


def metrics(summaries: list[WindowSummary], policy: AlertPolicy) -> list[str]:
    """The metrics ``policy`` watches: the pass rate, its scorer's mean, or every scorer's."""
    if policy.metric == "pass_rate":
        return ["pass_rate"]
    if policy.scorer is not None:
        return [f"mean:{policy.scorer}"]
    return [f"mean:{name}" for name in sorted({n for s in summaries for n in s.means})]


def incidents(
    summaries: list[WindowSummary], policy: AlertPolicy, baseline: WindowSummary | None = None
) -> list[Incident]:
    """Every incident ``summaries`` (one rule's windows, oldest first) hold under ``policy``;
    ``baseline`` is the named baseline window (``policy.baseline`` a window's label) when it is
    not among them."""
    ordered = sorted(summaries, key=lambda s: s.start)
    found: list[Incident] = []
    for metric in metrics(ordered, policy):
        counted = [
            (s, f)
            for s in ordered
            if s.closed and (f := figure(s, metric)) is not None and f.n >= policy.min_samples
        ]
        if policy.floor is not None:
            found += _floor(counted, policy, metric, policy.floor)
        if policy.baseline is not None:
            found += _baseline(counted, policy, metric, baseline)
    return found


def _floor(
    counted: list[tuple[WindowSummary, Figure]], policy: AlertPolicy, metric: str, floor: float
) -> list[Incident]:
    found: list[Incident] = []
    streak: list[WindowSummary] = []
    for summary, fig in counted:
        if fig.interval.high < floor:
            streak.append(summary)
            continue
        if len(streak) >= policy.consecutive:
            found.append(_streak(streak, metric))
        streak = []
    if len(streak) >= policy.consecutive:
        found.append(_streak(streak, metric))
    return found


def _streak(streak: list[WindowSummary], metric: str) -> Incident:
    first = streak[0]
    return Incident(
        rule=first.rule,
        key=f"floor/{metric}/{first.label}",
        kind="floor",
        metric=metric,
        windows=tuple(streak),
    )


def _baseline(
    counted: list[tuple[WindowSummary, Figure]],
    policy: AlertPolicy,
    metric: str,
    named: WindowSummary | None,
) -> list[Incident]:
    found: list[Incident] = []
    reference: tuple[WindowSummary, Figure] | None = None
    if policy.baseline != "previous":
        reference = next(((s, f) for s, f in counted if s.label == policy.baseline), None)
        if reference is None and named is not None and (f := figure(named, metric)) is not None:
            reference = (named, f) if f.n >= policy.min_samples else None
        if reference is None:
            return []
    going = False  # the window before was worse too
    for i, (summary, fig) in enumerate(counted):
        base = counted[i - 1] if policy.baseline == "previous" and i > 0 else reference
        if base is None or base[0].start >= summary.start:
            continue
        p = one_sided_p(base[1], fig)
        if p >= policy.alpha or going:  # a drop that goes on is the same incident
            going = p < policy.alpha
            continue
        going = True
        found.append(
            Incident(
                rule=summary.rule,
                key=f"baseline/{metric}/{summary.label}",
                kind="baseline",
                metric=metric,
                windows=(summary,),
                baseline=base[0],
                p_value=p,
            )
        )
    return found


def one_sided_p(base: Figure, window: Figure) -> float:
    """The one-sided p-value that ``window``'s metric is below ``base``'s: a pooled
    two-proportion z test for counts, Welch's t test for means."""
    if base.successes is not None and window.successes is not None:
        pooled = (base.successes + window.successes) / (base.n + window.n)
        if pooled in (0.0, 1.0):
            return 1.0
        se = math.sqrt(pooled * (1 - pooled) * (1 / base.n + 1 / window.n))
        z = (base.successes / base.n - window.successes / window.n) / se
        return 1.0 - NormalDist().cdf(z)
    return _welch(base, window)


def _welch(base: Figure, window: Figure) -> float:
    vb = (base.sd or 0.0) ** 2 / base.n
    vw = (window.sd or 0.0) ** 2 / window.n
    diff = base.interval.estimate - window.interval.estimate
    if vb + vw == 0.0:
        # no spread in either window: worse is certain when the means differ, else nothing
        return 0.0 if diff > 0 else 1.0
    t = diff / math.sqrt(vb + vw)
    spread = (vb * vb / (base.n - 1) if base.n > 1 else 0.0) + (
        vw * vw / (window.n - 1) if window.n > 1 else 0.0
    )
    # Welch-Satterthwaite degrees of freedom (one value per side: the least, 1)
    df = max((vb + vw) ** 2 / spread, 1.0) if spread > 0 else 1.0
    # scipy.special's Student t imports much faster than scipy.stats
    from scipy.special import stdtr

    return float(stdtr(df, -t))
