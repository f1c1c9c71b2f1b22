"""How many human labels each review selection needs for a judge-human kappa interval of 0.10.

Usage: ``python bench/review_selection.py [--items 5000] [--reps 8] [--cap 1500] [--seed 0]``

Simulates a judged run: each item's true label is a pass with probability ``--prevalence``; the
judge's score is a noisy logistic of it (three samples per item, their median the score), its
verdict the score at or above 0.5; a human labels the truth. For each selection (random only;
stratified + uncertain half and half; the default mix 40/40/20) and each label count, the
labelled items' judge-human Cohen's kappa (``aieval.stats.cohen_kappa``) gets a 95% interval
(large-sample standard error, Cohen 1960), averaged over ``--reps`` seeded queues; the table
gives the fewest labels whose mean width is at most ``--width`` and the saving against random.

The kappa measured on a selected (not uniform) slice is the judge's agreement on that slice:
stratified and uncertain selections aim the labels where the judge's errors are, and the
random slice of the default mix keeps an unbiased estimate beside them.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Mapping, Sequence

from aieval.judges import Judged, select_items
from aieval.stats import cohen_kappa

MIXES: dict[str, Mapping[str, float]] = {
    "random": {"random": 1.0},
    "stratified+uncertain": {"stratified": 0.5, "uncertain": 0.5},
    "default 40/40/20": {"stratified": 0.4, "uncertain": 0.4, "random": 0.2},
}


def population(n: int, prevalence: float, seed: int) -> tuple[list[Judged], dict[str, bool]]:
    """``n`` judged items and their true labels."""
    rng = random.Random(seed)
    items, truth = [], {}
    for i in range(n):
        passed = rng.random() < prevalence
        base = 1.6 if passed else -1.6
        samples = tuple(1 / (1 + math.exp(-(base + rng.gauss(0, 1.6)))) for _ in range(3))
        sid = f"s{i}"
        items.append(Judged("run", sid, statistics.median(samples), samples))
        truth[sid] = passed
    return items, truth


def kappa_width(picked: Sequence[Judged], truth: Mapping[str, bool]) -> float:
    """The width of the 95% interval of the judge-human kappa on ``picked``."""
    judge = [item.score >= 0.5 for item in picked]
    human = [truth[item.sample_id] for item in picked]
    n = len(picked)
    po = sum(a == b for a, b in zip(judge, human, strict=True)) / n
    pj, ph = sum(judge) / n, sum(human) / n
    pe = pj * ph + (1 - pj) * (1 - ph)
    kappa = cohen_kappa(judge, human, zero_division=0.0)
    if pe >= 1 or not math.isfinite(kappa):
        return math.inf
    se = math.sqrt(po * (1 - po) / n) / (1 - pe)
    return 2 * 1.959964 * se


def labels_needed(
    items: Sequence[Judged],
    truth: Mapping[str, bool],
    mix: Mapping[str, float],
    width: float,
    reps: int,
    seed: int,
    cap: int,
) -> tuple[int | None, dict[int, float]]:
    """The fewest labels (on a grid of 25, up to ``cap``) whose mean interval width is at most
    ``width``; ``None`` when ``cap`` labels do not reach it."""
    widths: dict[int, float] = {}
    by_id = {item.sample_id: item for item in items}
    size = 25
    while size <= min(len(items), cap):
        runs = []
        for rep in range(reps):
            picks = select_items(items, size, mix=mix, seed=seed * 1000 + rep)
            runs.append(kappa_width([by_id[p.sample_id] for p in picks], truth))
        widths[size] = statistics.fmean(runs)
        if widths[size] <= width:
            return size, widths
        size += 25 if size < 500 else 100
    return None, widths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--cap", type=int, default=1500)
    parser.add_argument("--prevalence", type=float, default=0.4)
    parser.add_argument("--width", type=float, default=0.10)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    items, truth = population(args.items, args.prevalence, args.seed)
    judge = [item.score >= 0.5 for item in items]
    human = [truth[item.sample_id] for item in items]
    print(
        f"{args.items} items, prevalence {args.prevalence}, judge-human kappa on all of them"
        f" {cohen_kappa(judge, human):.3f}; target mean 95% interval width {args.width}"
    )
    print("| selection | labels needed | mean width at 200 / 400 labels | labels vs random |")
    print("|---|---:|---:|---:|")
    base = None
    for name, mix in MIXES.items():
        needed, widths = labels_needed(
            items, truth, mix, args.width, args.reps, args.seed, args.cap
        )
        base = base or needed
        at = " / ".join(f"{widths[n]:.3f}" if n in widths else "-" for n in (200, 400))
        shown = f"{needed}" if needed else f"> {args.cap}"
        ratio = f"{needed / base:.0%}" if needed and base else "-"
        print(f"| {name} | {shown} | {at} | {ratio} |", flush=True)
    print(f"wall {time.perf_counter() - started:.1f} s, CPU {time.process_time() - cpu:.1f} s")


if __name__ == "__main__":
    main()
