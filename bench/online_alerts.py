"""False alerts per simulated week of the online alert rules under a stationary process, and
how fast they catch a real drop: the figures behind ``AlertPolicy``'s defaults (docs/online.md).

Usage: ``python bench/online_alerts.py [--weeks 200] [--reps 200] [--seed 0]
[--consecutive 3] [--alpha 0.001] [--min-samples 20] [--margin 0.05]``

Hourly windows; the traffic of each hour is Poisson around a daily cycle (a quiet night at a
fifth of the day's rate) of mean ``size`` traces per hour. Each trace passes with probability
``rate``, the same in every hour (stationary), and carries a judge score drawn from a Beta
distribution with mean ``rate`` (for the mean metric). The windows go through the project's own
:func:`aieval.online.incidents` (the same Wilson and t intervals, tests and streak rules the
server uses), with ``floor = rate - margin`` and each baseline: ``previous`` and a fixed window
(noon of the week's first day; each simulated week is a deployment of its own, with its own
baseline). A false alert is any incident: the table gives them per week with a 95% interval
(exact Poisson). The power table starts a drop of ``d`` after two stationary days
and gives the share of ``--reps`` runs in which an incident opened within 6 and 24 hours of the
drop, and the median delay in hours.
"""

from __future__ import annotations

import argparse
import math
import statistics
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from aieval.online import AlertPolicy, incidents, window_run_name
from aieval.online._windows import MeanScore, WindowSummary
from aieval.stats import t_interval_from_moments, wilson_interval

HOUR = 3600.0
WEEK = 168
SIZES = (30, 100, 400)
RATES = (0.6, 0.8, 0.95)
#: the Beta's concentration (a + b) of the simulated judge scores
CONCENTRATION = 4.0


@dataclass(frozen=True)
class Row:
    """One stationary setting's false alerts: ``floor`` and ``baseline`` incidents in all."""

    metric: str
    size: int
    rate: float
    floor: int
    previous: int
    fixed: int
    weeks: int


def traffic(hours: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Traces per hour: Poisson around a daily cycle of mean ``size`` (nights at a fifth)."""
    phase = np.arange(hours) % 24
    shape = 0.2 + 0.8 * (np.sin((phase - 6) / 24 * 2 * math.pi) + 1) / 2
    return rng.poisson(size * shape / shape.mean())


def windows(
    counts: np.ndarray, rates: np.ndarray, rng: np.random.Generator, metric: str
) -> list[WindowSummary]:
    """One window per hour, ``counts[h]`` traces passing with probability ``rates[h]``."""
    out = []
    for h, (n, rate) in enumerate(zip(counts.tolist(), rates.tolist(), strict=True)):
        start = h * HOUR
        means: dict[str, MeanScore] = {}
        passed = int(rng.binomial(n, rate)) if n else 0
        if metric == "mean" and n:
            scores = rng.beta(rate * CONCENTRATION, (1 - rate) * CONCENTRATION, n)
            sd = float(scores.std(ddof=1)) if n > 1 else 0.0
            mean = float(scores.mean())
            ci = t_interval_from_moments(int(n), mean, sd)
            means = {"judge": MeanScore("judge", int(n), mean, sd, ci)}
        out.append(
            WindowSummary(
                rule="sim",
                start=start,
                end=start + HOUR,
                run_id=f"w{h}",
                run_name=window_run_name("sim", start, "hour"),
                closed=True,
                scored=int(n),
                passed=passed,
                pass_rate=wilson_interval(passed, int(n)) if n else None,
                means=means,
            )
        )
    return out


def policies(base: AlertPolicy, metric: str, rate: float, margin: float) -> dict[str, AlertPolicy]:
    """The three rules a rule may set, on ``metric``, each alone."""
    kind = "pass_rate" if metric == "pass_rate" else "mean"
    one = replace(base, metric=kind, scorer=None if kind == "pass_rate" else "judge")
    return {
        "floor": replace(one, floor=rate - margin, baseline=None),
        "previous": replace(one, floor=None, baseline="previous"),
        "fixed": replace(one, floor=None, baseline=_label(12 * HOUR)),
    }


def stationary(
    base: AlertPolicy, weeks: int, margin: float, seed: int, metrics: tuple[str, ...]
) -> list[Row]:
    """False alerts of every rule, size and rate over ``weeks`` stationary weeks."""
    rows = []
    for metric in metrics:
        for size in SIZES:
            for rate in RATES:
                rng = np.random.default_rng([seed, size, int(rate * 100), len(metric)])
                found = dict.fromkeys(("floor", "previous", "fixed"), 0)
                for _ in range(weeks):  # each week a deployment of its own (its own baseline)
                    sim = windows(traffic(WEEK, size, rng), np.full(WEEK, rate), rng, metric)
                    for name, policy in policies(base, metric, rate, margin).items():
                        found[name] += len(incidents(sim, policy))
                rows.append(Row(metric, size, rate, weeks=weeks, **found))
    return rows


def _label(start: float) -> str:
    return window_run_name("sim", start, "hour").rsplit("/", 1)[-1]


def per_week(count: int, weeks: int) -> tuple[float, float, float]:
    """Alerts per week and its exact (Garwood) 95% interval."""
    low = 0.0 if count == 0 else stats.chi2.ppf(0.025, 2 * count) / 2
    high = stats.chi2.ppf(0.975, 2 * count + 2) / 2
    return count / weeks, float(low) / weeks, float(high) / weeks


def detection(
    base: AlertPolicy, size: int, rate: float, drop: float, margin: float, reps: int, seed: int
) -> dict[str, tuple[float, float, float | None]]:
    """Per rule: the share of runs alerting within 6 and 24 hours of a drop of ``drop`` after
    48 stationary hours, and the median delay (hours from the drop to the alerting window's
    end; ``None`` when fewer than half alerted within 48 hours)."""
    delays: dict[str, list[float]] = {name: [] for name in ("floor", "previous", "fixed")}
    rng = np.random.default_rng([seed, size, int(rate * 100), int(drop * 100)])
    for _ in range(reps):
        rates = np.concatenate([np.full(48, rate), np.full(48, rate - drop)])
        sim = windows(traffic(96, size, rng), rates, rng, "pass_rate")
        for name, policy in policies(base, "pass_rate", rate, margin).items():
            ends = sorted(
                i.windows[min(len(i.windows), policy.consecutive) - 1 if name == "floor" else 0].end
                for i in incidents(sim, policy)
            )
            after = [e / HOUR - 48 for e in ends if e / HOUR > 48]
            delays[name].append(after[0] if after else math.inf)
    out = {}
    for name, found in delays.items():
        median = statistics.median(found)
        out[name] = (
            sum(d <= 6 for d in found) / reps,
            sum(d <= 24 for d in found) / reps,
            None if math.isinf(median) else median,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weeks", type=int, default=200)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--consecutive", type=int, default=AlertPolicy().consecutive)
    parser.add_argument("--alpha", type=float, default=AlertPolicy().alpha)
    parser.add_argument("--min-samples", type=int, default=AlertPolicy().min_samples)
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--metrics", nargs="+", default=["pass_rate", "mean"])
    args = parser.parse_args()
    base = AlertPolicy(consecutive=args.consecutive, alpha=args.alpha, min_samples=args.min_samples)
    print(
        f"consecutive={base.consecutive} alpha={base.alpha} min_samples={base.min_samples}"
        f" margin={args.margin}; {args.weeks} stationary weeks per row\n"
    )
    print("| metric | traces/hour | rate | floor /week | previous /week | fixed /week |")
    print("|---|---|---|---|---|---|")
    for row in stationary(base, args.weeks, args.margin, args.seed, tuple(args.metrics)):
        cells = [
            "{:.3f} ({:.3f}-{:.3f})".format(*per_week(n, row.weeks))
            for n in (row.floor, row.previous, row.fixed)
        ]
        print(f"| {row.metric} | {row.size} | {row.rate} | {' | '.join(cells)} |")
    print(f"\npower: alerted within 6 h / 24 h of the drop, median delay (h); {args.reps} runs\n")
    print("| traces/hour | rate | drop | floor | previous | fixed |")
    print("|---|---|---|---|---|---|")
    for size in SIZES:
        for rate in (0.8, 0.95):
            for drop in (0.1, 0.2):
                found = detection(base, size, rate, drop, args.margin, args.reps, args.seed)
                cells = [
                    f"{a:.2f} / {b:.2f}, {'-' if m is None else f'{m:.0f}'}"
                    for a, b, m in found.values()
                ]
                print(f"| {size} | {rate} | {drop} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
