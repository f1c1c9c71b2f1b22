"""Coverage of the judge-human kappa interval near kappa = 1 (few errors, small label sets).

Usage: ``python bench/judge_kappa_edges.py [--runs 400] [--seed 0]``

For judges that are nearly perfect (TPR/TNR of 0.9-0.995) on 112 or 200 labelled items,
simulates ``--runs`` label sets each and prints how often the interval
``aieval.judges.agreement`` reports (the bootstrap, widened to the ``z²/8``-adjusted analytic
interval when a cell of the 2x2 table is empty or the bootstrap has no width, as
``aieval.stats.kappa_interval`` now does itself) and the plain percentile bootstrap cover the
population kappa, how often
their lower bound lies at or below it (what certification relies on), and how often the
widening was used. Label sets where kappa is undefined are left out and counted. Fixed grid,
fixed seed.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numpy as np

from aieval.judges._agreement import _judge_human
from aieval.stats._judge_error import percentile_bootstrap

#: (base rate, TPR, TNR, labelled items)
GRID = (
    (0.85, 0.995, 0.97, 112),
    (0.85, 0.99, 0.94, 112),
    (0.85, 0.98, 0.90, 112),
    (0.70, 0.995, 0.99, 200),
)


def population_kappa(base: float, tpr: float, tnr: float) -> float:
    """Cohen's kappa of a judge of this TPR/TNR against the truth at this base rate."""
    agree = base * tpr + (1 - base) * tnr
    judge_pass = base * tpr + (1 - base) * (1 - tnr)
    chance = base * judge_pass + (1 - base) * (1 - judge_pass)
    return (agree - chance) / (1 - chance)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    print(f"load {os.getloadavg()[0]:.1f}; {args.runs} label sets per cell")
    print(
        "base  TPR    TNR    n    kappa  undefined  cover(ours/boot)  "
        "low<=kappa(ours/boot)  widened"
    )
    for base, tpr, tnr, n in GRID:
        truth = population_kappa(base, tpr, tnr)
        rng = random.Random(args.seed)
        used = undefined = cover = cover_boot = low_ok = low_ok_boot = widened = 0
        for _ in range(args.runs):
            human = [rng.random() < base for _ in range(n)]
            judged = [(rng.random() < tpr) if h else (rng.random() >= tnr) for h in human]
            ours, why = _judge_human(human, judged)
            if why is not None:
                undefined += 1
                continue
            cells = np.zeros(4)
            for h, j in zip(human, judged, strict=True):
                cells[2 * int(h) + int(j)] += 1
            low, high = percentile_bootstrap(cells, 0.95, 2000, 0)
            used += 1
            cover += ours.low <= truth <= ours.high
            cover_boot += low <= truth <= high
            low_ok += ours.low <= truth
            low_ok_boot += low <= truth
            widened += ours.low != low
        m = max(used, 1)
        print(
            f"{base:.2f}  {tpr:.3f}  {tnr:.3f}  {n:3d}  {truth:.3f}  {undefined:9d}  "
            f"{cover / m:6.1%} / {cover_boot / m:6.1%}   {low_ok / m:6.1%} / {low_ok_boot / m:6.1%}"
            f"       {widened / m:5.1%}"
        )
    print(f"wall {time.perf_counter() - started:.1f} s, CPU {time.process_time() - cpu:.1f} s")


if __name__ == "__main__":
    main()
