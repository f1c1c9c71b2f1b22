"""Error rates of the promotion decision's non-inferiority test, by method, data shape and n.

Usage::

    python bench/promotion.py                         # 400 trials per cell
    python bench/promotion.py --trials 2000 --sizes 50 500 --methods t bootstrap-t

For each data shape of ``bench/_promotion_data.py`` and each sample size, it simulates paired
runs whose candidate is worse by exactly the margin (1 point: a promotion is a false promotion,
the target is at most alpha = 5%) and equal to the baseline (a promotion is the power), and
prints each method's promotion rate with its 95% Wilson interval. ``test`` is the test
``decide_promotion`` picks (the paired-proportion test on 0/1 scores, else the studentized
bootstrap); ``policy`` is the whole default decision (that test plus the rules, among them
``min_paired``: 60 examples); ``percentile`` is a percentile bootstrap bound, ``bca`` scipy's
BCa bound. ``oracle`` is a z-test that knows the shape's true standard deviation: no test of the
mean difference can do better on average, so its power is the ceiling for the others.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _promotion_data import MODELS
from scipy.stats import norm

from aieval.report import ExampleNumbers, PromotionPolicy, decide_promotion
from aieval.report._policy import score_test
from aieval.stats import noninferiority_test, paired_bootstrap_ci, wilson_interval

MARGIN, ALPHA = 1.0, 0.05


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
                                 scale=100.0, n_resamples=2000, seed=seed)  # fmt: skip
    return result.non_inferior


def rate(model: str, n: int, shift: float, methods: list[str], trials: int) -> dict[str, int]:
    """Promotions per method over ``trials`` simulated pairs of runs (same data for all)."""
    rng = np.random.default_rng([n, int(shift * 10) + 100, list(MODELS).index(model)])
    counts = dict.fromkeys(methods, 0)
    sd = true_sd(model, shift) if "oracle" in methods else 0.0
    for trial in range(trials):
        base, cand = MODELS[model](rng, n, shift)
        for method in methods:
            counts[method] += promoted(method, base, cand, trial, sd)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 2000])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    methods = ["t", "percentile", "bca", "bootstrap-t", "proportion", "test", "policy", "oracle"]
    parser.add_argument("--methods", nargs="+", default=methods, choices=methods)
    args = parser.parse_args()
    print(f"promotion rate (95% Wilson interval), {args.trials} trials per cell, margin "
          f"{MARGIN:g} point, alpha {ALPHA:g}")  # fmt: skip
    print("| shape | n | truth | " + " | ".join(args.methods) + " |")
    print("|---|---|---|" + "---|" * len(args.methods))
    for model in args.models:
        methods = [m for m in args.methods if m != "proportion" or model == "binary"]
        for n in args.sizes:
            for shift, label in ((-MARGIN, "at margin"), (0.0, "equal")):
                start = time.perf_counter()
                counts = rate(model, n, shift, methods, args.trials)
                cells = []
                for method in args.methods:
                    if method not in counts:
                        cells.append("-")
                        continue
                    ci = wilson_interval(counts[method], args.trials)
                    cells.append(f"{ci.estimate:.1%} ({ci.low:.1%}-{ci.high:.1%})")
                took = time.perf_counter() - start
                row = f"| {model} | {n} | {label} | " + " | ".join(cells) + " |"
                print(row + f"  <!-- {took:.0f}s -->", flush=True)


if __name__ == "__main__":
    main()
