"""Error rates of the promotion decision's non-inferiority test, by method, data shape and n.

Usage::

    python bench/promotion.py                         # 400 trials per cell
    python bench/promotion.py --trials 2000 --sizes 50 500 --methods t bootstrap-t
    python bench/promotion.py --closed-form --sizes 20000 100000 --trials 1000 300 \
        --equal-trials 200 100                        # at and above bootstrap_max_n

For each data shape of ``bench/_promotion_data.py`` and each sample size, it simulates paired
runs whose candidate is worse by exactly the margin (1 point: a promotion is a false promotion,
the target is at most alpha = 5%) and equal to the baseline (a promotion is the power), and
prints each method's promotion rate with its 95% Wilson interval. ``test`` is the test
``decide_promotion`` picks (the paired-proportion test on 0/1 scores, else the studentized
bootstrap); ``policy`` is the whole default decision (that test plus the rules, among them
``min_paired``: 60 examples); ``percentile`` is a percentile bootstrap bound, ``bca`` scipy's
BCa bound. ``oracle`` is a z-test that knows the shape's true standard deviation: no test of the
mean difference can do better on average, so its power is the ceiling for the others.

``--closed-form`` prints, per shape and size, the closed-form test that ``interval_method:
auto`` uses at or above ``bootstrap_max_n`` (the paired t-test; Tango's test on 0/1 scores)
beside the studentized bootstrap with the policy's default resamples, on the same simulated
runs: each one's false promotion rate (at the margin) and equal-candidate promotion rate with
95% Wilson intervals, the trials where the two decisions differ, and the seconds each took.
``--trials``, ``--equal-trials`` and ``--closed-trials`` (the closed form alone: it is cheap)
take one count, or one per size; ``--budget`` caps the bootstrap's seconds per cell on a busy
machine. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _promotion_data import MODELS
from scipy.stats import norm

from aieval.report import ExampleNumbers, PromotionPolicy, decide_promotion
from aieval.report._policy import score_test
from aieval.stats import noninferiority_test, paired_bootstrap_ci, wilson_interval

MARGIN, ALPHA = 1.0, 0.05
RESAMPLES = PromotionPolicy().n_resamples  # the policy's default, as decisions use it


def true_sd(model: str, shift: float) -> float:
    """The shape's standard deviation of per-example differences, from a million draws."""
    base, cand = MODELS[model](np.random.default_rng(0), 1_000_000, shift)
    return float(np.std(cand - base))


def _examples(scores: np.ndarray) -> list[ExampleNumbers]:
    return [ExampleNumbers(id=str(i), passed=True, weighted_score=float(v))
            for i, v in enumerate(scores)]  # fmt: skip


def promoted(method: str, base: np.ndarray, cand: np.ndarray, seed: int, sd: float) -> bool:
    """Whether ``method`` shows non-inferiority of ``cand`` at the margin."""
    d = cand - base
    if method == "oracle":
        return float(d.mean()) - norm.ppf(1 - ALPHA) * sd / np.sqrt(len(d)) > -MARGIN
    if method == "test":
        return score_test(base, cand, PromotionPolicy(), seed=seed).non_inferior
    if method == "policy":
        policy = PromotionPolicy(seed=seed)
        return decide_promotion(_examples(base), _examples(cand), policy).promote
    if method == "percentile":
        ci = paired_bootstrap_ci(base, cand, confidence=1 - 2 * ALPHA, seed=seed)
        return ci.low > -MARGIN
    if method == "bca":
        from scipy.stats import bootstrap

        if np.ptp(d) == 0:
            return float(d.mean()) > -MARGIN
        ci = bootstrap((d,), np.mean, confidence_level=1 - 2 * ALPHA, method="BCa",
                       n_resamples=2000, random_state=seed)  # fmt: skip
        return float(ci.confidence_interval.low) > -MARGIN
    if method == "proportion" and not np.all(np.isin(d, (-100.0, 0.0, 100.0))):
        return False
    result = noninferiority_test(d, margin=MARGIN, alpha=ALPHA, method=method,  # type: ignore[arg-type]
                                 scale=100.0, n_resamples=RESAMPLES, seed=seed)  # fmt: skip
    return result.non_inferior


@dataclass
class Trials:
    """Each method's decisions over simulated pairs of runs; trial ``i`` is the same data for
    every method that ran it."""

    outcomes: dict[str, np.ndarray]
    seconds: dict[str, float]

    def count(self, method: str, trials: int | None = None) -> int:
        """Promotions by ``method`` in its first ``trials`` trials (default all it ran)."""
        return int(self.outcomes[method][:trials].sum())

    def only(self, method: str, other: str) -> int:
        """Trials both ran where ``method`` promoted and ``other`` did not."""
        k = min(len(self.outcomes[method]), len(self.outcomes[other]))
        return int((self.outcomes[method][:k] & ~self.outcomes[other][:k]).sum())


def simulate(
    model: str,
    n: int,
    shift: float,
    methods: list[str],
    trials: int,
    label: str = "",
    first: dict[str, int] | None = None,
    budget: float = math.inf,
) -> Trials:
    """Run ``trials`` simulated pairs of runs through every method, timing each.

    A method in ``first`` (a costly one beside cheap ones) runs only on that many of the first
    trials, and on none after ``budget`` seconds: when it stops depends on the clock, never on
    the outcomes, so its rate stays unbiased (the table says how many trials it ran)."""
    rng = np.random.default_rng([n, int(shift * 10) + 100, list(MODELS).index(model)])
    runs = {m: min(trials, (first or {}).get(m, trials)) for m in methods}
    outcomes = {m: np.zeros(runs[m], dtype=bool) for m in methods}
    seconds = dict.fromkeys(methods, 0.0)
    sd = true_sd(model, shift) if "oracle" in methods else 0.0
    start = last = time.perf_counter()
    for trial in range(trials):
        base, cand = MODELS[model](rng, n, shift)
        for method in methods:
            if trial < runs[method]:
                t0 = time.perf_counter()
                outcomes[method][trial] = promoted(method, base, cand, trial, sd)
                seconds[method] += time.perf_counter() - t0
        now = time.perf_counter()
        if now - start > budget:
            for method in first or {}:
                if runs[method] > trial + 1:
                    runs[method] = trial + 1
                    outcomes[method] = outcomes[method][: trial + 1]
        if label and (now - last >= 30 or trial + 1 == trials):
            last = now
            print(f"  {label}: {trial + 1}/{trials} trials, {now - start:.0f}s",
                  file=sys.stderr, flush=True)  # fmt: skip
    return Trials(outcomes, seconds)


def rate(model: str, n: int, shift: float, methods: list[str], trials: int) -> dict[str, int]:
    """Promotions per method over ``trials`` simulated pairs of runs (same data for all)."""
    done = simulate(model, n, shift, methods, trials)
    return {m: done.count(m) for m in methods}


def _wilson(successes: int, trials: int) -> str:
    ci = wilson_interval(successes, trials)
    return f"{ci.estimate:.1%} ({ci.low:.1%}-{ci.high:.1%})"


def _per_size(counts: list[int], sizes: list[int], flag: str) -> dict[int, int]:
    if len(counts) not in (1, len(sizes)):
        raise SystemExit(f"{flag}: give one count or one per size ({len(sizes)})")
    return dict(zip(sizes, counts * len(sizes) if len(counts) == 1 else counts, strict=True))


def methods_table(args: argparse.Namespace) -> None:
    """The existing table: one row per shape, size and truth, one column per method."""
    trials = _per_size(args.trials, args.sizes, "--trials")
    print(f"promotion rate (95% Wilson interval), {', '.join(map(str, args.trials))} trials "
          f"per cell, margin {MARGIN:g} point, alpha {ALPHA:g}")  # fmt: skip
    print("| shape | n | truth | " + " | ".join(args.methods) + " |")
    print("|---|---|---|" + "---|" * len(args.methods))
    for model in args.models:
        methods = [m for m in args.methods if m != "proportion" or model == "binary"]
        for n in args.sizes:
            for shift, label in ((-MARGIN, "at margin"), (0.0, "equal")):
                start = time.perf_counter()
                counts = rate(model, n, shift, methods, trials[n])
                cells = [_wilson(counts[m], trials[n]) if m in counts else "-"
                         for m in args.methods]  # fmt: skip
                took = time.perf_counter() - start
                row = f"| {model} | {n} | {label} | " + " | ".join(cells) + " |"
                print(row + f"  <!-- {took:.0f}s -->", flush=True)


def closed_form_table(args: argparse.Namespace) -> None:
    """The closed-form test beside the studentized bootstrap on the same trials, and the closed
    form alone on ``--closed-trials`` (it costs nothing beside the data)."""
    trials = _per_size(args.trials, args.sizes, "--trials")
    equal = _per_size(args.equal_trials or args.trials, args.sizes, "--equal-trials")
    alone = _per_size(args.closed_trials or [0], args.sizes, "--closed-trials")
    print(
        f"closed form against the studentized bootstrap ({RESAMPLES} resamples), margin "
        f"{MARGIN:g} point, alpha {ALPHA:g}; promotion rates with 95% Wilson intervals; "
        "'differs': trials of the same data this method promoted and the other did not"
    )
    print(
        "| n | shape | method | trials (margin / equal) | false promotion rate (at margin) "
        "| differs | equal-candidate promotion rate | differs | seconds (per decision) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for model in args.models:
            closed = "proportion" if model == "binary" else "t"
            pair = [closed, "bootstrap-t"]
            tag = f"{model} n={n}"
            runs = (max(trials[n], alone[n]), max(equal[n], alone[n]))
            margin = simulate(model, n, -MARGIN, pair, runs[0], f"{tag} at margin",
                              {"bootstrap-t": trials[n]}, args.budget)  # fmt: skip
            same = simulate(model, n, 0.0, pair, runs[1], f"{tag} equal",
                            {"bootstrap-t": equal[n]}, args.budget / 4)  # fmt: skip
            both = (len(margin.outcomes["bootstrap-t"]), len(same.outcomes["bootstrap-t"]))
            rows = [(closed, *both, "bootstrap-t"), ("bootstrap-t", *both, closed)]
            if alone[n] > max(both):
                rows.append((closed, *runs, ""))
            for method, at, eq, other in rows:
                took = margin.seconds[method] + same.seconds[method]
                per = took / (len(margin.outcomes[method]) + len(same.outcomes[method]))
                differs = ((margin.only(method, other), same.only(method, other)) if other
                           else ("-", "-"))  # fmt: skip
                print(f"| {n} | {model} | {method} | {at} / {eq} "
                      f"| {_wilson(margin.count(method, at), at)} | {differs[0]} "
                      f"| {_wilson(same.count(method, eq), eq)} | {differs[1]} "
                      f"| {took:.0f} ({per:.3f}) |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[400],
                        help="trials per cell: one count, or one per size")  # fmt: skip
    parser.add_argument(
        "--equal-trials",
        type=int,
        nargs="+",
        help="--closed-form: trials of equal candidates (default --trials)",
    )
    parser.add_argument(
        "--closed-trials",
        type=int,
        nargs="+",
        help="--closed-form: trials of the closed form alone (it is cheap)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=math.inf,
        help="--closed-form: seconds of bootstrap-t trials per shape and size at the margin "
        "(a quarter of it for equal candidates); fewer trials when it runs out",
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 2000])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    methods = ["t", "percentile", "bca", "bootstrap-t", "proportion", "test", "policy", "oracle"]
    parser.add_argument("--methods", nargs="+", default=methods, choices=methods)
    parser.add_argument("--closed-form", action="store_true",
                        help="the closed-form test beside the studentized bootstrap")  # fmt: skip
    args = parser.parse_args()
    if min(args.trials + (args.equal_trials or [1]) + (args.closed_trials or [1])) < 1:
        raise SystemExit("trial counts must be at least 1")
    (closed_form_table if args.closed_form else methods_table)(args)


if __name__ == "__main__":
    main()
