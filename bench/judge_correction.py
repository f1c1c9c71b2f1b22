"""Coverage of the corrected pass rate's interval and of the judge-human kappa interval.

Usage: ``python bench/judge_correction.py [--runs 1000] [--n 500] [--labels 200] [--seed 0]
[--bootstrap 1000] [--difference]``

For judges of known TPR/TNR and true pass rates 0.2-0.8, simulates ``--runs`` runs each: a run
of ``--n`` samples graded by the judge, and ``--labels`` human-labelled items drawn from the same
population (their human pass/fail and the judge's verdict). Per run it computes

- the raw interval: Wilson on the judge's pass rate (what a report shows without correction);
- the corrected interval of ``aieval.stats.rogan_gladen`` (adjusted delta method), the plain
  delta method, and a percentile bootstrap over both samples (run and labels resampled);
- judge-human kappa: ``aieval.stats.kappa_interval``'s analytic interval and its percentile
  bootstrap over the labelled items (the default);
- human-human kappa (two reviewers on each of ``--labels`` items, each flipping the truth with a
  known probability): the percentile bootstrap over items that ``aieval.judges.agreement`` uses;

and prints each interval's coverage of the truth (the true pass rate; the population kappa),
with the runs refused (too few labels on a side, or a judge no better than chance). The
simulation draws, it never looks at the intervals: fixed grid, fixed seed.

``--difference`` simulates the comparison instead (the ``judge_corrected_pass_rate`` rule): two
runs over the same ``--n`` inputs judged by one judge, whose ``--labels`` labels (TPR and TNR)
are shared; per run the corrected difference's delta interval
(``aieval.report._policy_correction.corrected_difference``, two-sided 95%) and the raw paired
difference's Wald interval, each against the true difference of pass rates.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import numpy as np

from aieval.errors import ConfigError
from aieval.report._policy_correction import corrected_difference
from aieval.stats import kappa_interval, rogan_gladen, wilson_interval
from aieval.stats._judge_error import MIN_LABELS_PER_CLASS, delta_interval

JUDGES = ((0.9, 0.9), (0.95, 0.75), (0.75, 0.95), (0.8, 0.7))
PREVALENCE = (0.2, 0.35, 0.5, 0.65, 0.8)
Z = 1.959963984540054


@dataclass
class Row:
    tpr: float
    tnr: float
    theta: float
    kappa: float
    refused: int
    raw: float
    corrected: float
    delta: float
    boot: float
    kappa_wald: float
    kappa_boot: float


def true_kappa(theta: float, tpr: float, tnr: float) -> float:
    """Population kappa of human (rows) and judge (columns) on pass/fail."""
    cells = np.array(
        [[(1 - theta) * tnr, (1 - theta) * (1 - tnr)], [theta * (1 - tpr), theta * tpr]]
    )
    agree = float(np.trace(cells))
    chance = float(cells.sum(axis=1) @ cells.sum(axis=0))
    return (agree - chance) / (1 - chance)


def simulate(
    tpr: float, tnr: float, theta: float, runs: int, n: int, labels: int, boots: int, seed: int
) -> Row:
    rng = np.random.default_rng(seed)
    kappa = true_kappa(theta, tpr, tnr)
    p_judge = theta * tpr + (1 - theta) * (1 - tnr)
    judged = rng.binomial(n, p_judge, runs)
    cells_p = [(1 - theta) * tnr, (1 - theta) * (1 - tnr), theta * (1 - tpr), theta * tpr]
    cells = rng.multinomial(labels, cells_p, runs)  # human fail/pass x judge fail/pass
    refused = raw = corrected = delta = boot = kw = kb = 0
    for r in range(runs):
        n00, n01, n10, n11 = (int(c) for c in cells[r])
        k = int(judged[r])
        raw_ci = wilson_interval(k, n)
        raw += raw_ci.low <= theta <= raw_ci.high
        human = [False] * (n00 + n01) + [True] * (n10 + n11)
        judge = [False] * n00 + [True] * n01 + [False] * n10 + [True] * n11
        kci = kappa_interval(human, judge, method="analytic")
        kw += kci.low <= kappa <= kci.high
        kbi = kappa_interval(human, judge, n_resamples=boots, seed=seed * 7919 + r)
        kb += kbi.low <= kappa <= kbi.high
        try:
            rate = rogan_gladen(
                k, n, true_pos=n11, positives=n10 + n11, true_neg=n00, negatives=n00 + n01
            )
        except ConfigError:
            refused += 1
            continue
        corrected += rate.low <= theta <= rate.high
        d_lo, d_hi = delta_interval(k, n, n11, n10 + n11, n00, n00 + n01, Z)
        delta += d_lo <= theta <= d_hi
        bp = rng.binomial(n, k / n, boots) / n
        b1 = rng.binomial(n10 + n11, n11 / (n10 + n11), boots) / (n10 + n11)
        b0 = rng.binomial(n00 + n01, n00 / (n00 + n01), boots) / (n00 + n01)
        youden = b1 + b0 - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.clip((bp + b0 - 1) / youden, 0, 1)
        est = est[youden > 0]
        b_lo, b_hi = np.quantile(est, [0.025, 0.975])
        boot += b_lo <= theta <= b_hi
    kept = max(runs - refused, 1)
    return Row(
        tpr, tnr, theta, kappa, refused, raw / runs, corrected / kept, delta / kept, boot / kept,
        kw / runs, kb / runs,
    )  # fmt: skip


def human_human(
    theta: float, error: float, runs: int, items: int, boots: int, seed: int
) -> tuple[float, float]:
    """Coverage of the human-human kappa's percentile bootstrap over items (the method
    ``aieval.judges.agreement`` uses), two reviewers per item who each flip the truth with
    probability ``error``; returns (population kappa, coverage)."""
    rng = np.random.default_rng(seed)
    rate = theta * (1 - error) + (1 - theta) * error
    agree = (1 - error) ** 2 + error**2
    chance = rate**2 + (1 - rate) ** 2
    truth = (agree - chance) / (1 - chance)
    both_pass = theta * (1 - error) ** 2 + (1 - theta) * error**2
    both_fail = theta * error**2 + (1 - theta) * (1 - error) ** 2
    cells = rng.multinomial(items, [both_pass, 1 - both_pass - both_fail, both_fail], runs)
    covered = 0
    for r in range(runs):
        draws = rng.multinomial(items, cells[r] / items, boots)
        same = (draws[:, 0] + draws[:, 2]) / items
        share = (2 * draws[:, 0] + draws[:, 1]) / (2 * items)
        pe = share**2 + (1 - share) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            kappas = np.where(pe < 1, (same - pe) / (1 - pe), 0.0)
        low, high = np.quantile(kappas, [0.025, 0.975])
        covered += low <= truth <= high
    return truth, covered / runs


BASE_RATES = (0.35, 0.5, 0.65)
CHANGES = (-0.10, 0.0, 0.05)
#: correlation of a sample's true pass/fail in the two runs (the same inputs)
RHO = 0.5


@dataclass
class DiffRow:
    tpr: float
    tnr: float
    base: float
    change: float
    refused: int
    raw: float
    corrected: float
    width: float


def simulate_difference(
    tpr: float, tnr: float, base: float, change: float, runs: int, n: int, labels: int, seed: int
) -> DiffRow:
    """Coverage of the corrected difference's interval and of the raw paired one."""
    rng = np.random.default_rng(seed)
    cand = base + change
    both = base * cand + RHO * float(np.sqrt(base * (1 - base) * cand * (1 - cand)))
    truth = {(1, 1): both, (1, 0): base - both, (0, 1): cand - both}
    truth[(0, 0)] = 1.0 - sum(truth.values())
    passes = {1: tpr, 0: 1 - tnr}  # the judge's pass chance given the human verdict
    up = sum(p * (1 - passes[b]) * passes[c] for (b, c), p in truth.items())
    down = sum(p * passes[b] * (1 - passes[c]) for (b, c), p in truth.items())
    moves = rng.multinomial(n, [up, down, 1 - up - down], runs)
    cells_p = [(1 - base) * tnr, (1 - base) * (1 - tnr), base * (1 - tpr), base * tpr]
    cells = rng.multinomial(labels, cells_p, runs)
    refused = raw = corrected = 0
    width = 0.0
    for r in range(runs):
        n00, n01, n10, n11 = (int(c) for c in cells[r])
        ups, downs = int(moves[r][0]), int(moves[r][1])
        deltas = [1] * ups + [-1] * downs + [0] * (n - ups - downs)
        mean = (ups - downs) / n
        var_d = (ups + downs) / n - mean**2
        half = Z * float(np.sqrt(var_d * n / (n - 1) / n))
        raw += mean - half <= change <= mean + half
        positives, negatives = n10 + n11, n00 + n01
        if (
            min(positives, negatives) < MIN_LABELS_PER_CLASS
            or n11 / positives + n00 / negatives <= 1
        ):
            refused += 1  # as the rule: held back, no corrected difference
            continue
        diff, se = corrected_difference(
            deltas, true_pos=n11, positives=positives, true_neg=n00, negatives=negatives
        )
        corrected += diff - Z * se <= change <= diff + Z * se
        width += 2 * Z * se
    kept = max(runs - refused, 1)
    return DiffRow(
        tpr, tnr, base, change, refused, raw / runs, corrected / kept, width / kept
    )  # fmt: skip


def differences(args: argparse.Namespace) -> None:
    """The comparison's table: corrected and raw difference coverage per cell."""
    print(
        f"{args.runs} runs per cell, n={args.n} paired samples, {args.labels} labels shared, "
        f"true pass/fail correlated {RHO} across the runs, seed {args.seed}; nominal 95%"
    )
    print(
        "| TPR | TNR | baseline rate | true difference | refused | raw difference "
        "| corrected difference | mean width (points) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for i, (tpr, tnr) in enumerate(JUDGES):
        for j, base in enumerate(BASE_RATES):
            for k, change in enumerate(CHANGES):
                seed = args.seed * 1000 + 700 + i * 100 + j * 10 + k
                row = simulate_difference(
                    tpr, tnr, base, change, args.runs, args.n, args.labels, seed
                )
                worst = min(worst, row.corrected)
                print(
                    f"| {tpr} | {tnr} | {base} | {change:+.2f} | {row.refused} | {row.raw:.1%} "
                    f"| {row.corrected:.1%} | {row.width * 100:.1f} |"
                )
    print(f"lowest coverage of the corrected difference: {worst:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--difference", action="store_true", help="simulate the comparison's difference only"
    )
    args = parser.parse_args()
    start, cpu = time.perf_counter(), time.process_time()
    if args.difference:
        differences(args)
        print(
            f"wall {time.perf_counter() - start:.1f} s, CPU {time.process_time() - cpu:.1f} s, "
            f"load {os.getloadavg()[0]:.2f}"
        )
        return
    print(
        f"{args.runs} runs per cell, n={args.n} graded samples, {args.labels} labels, "
        f"{args.bootstrap} bootstrap resamples, seed {args.seed}; nominal 95%"
    )
    print(
        "| TPR | TNR | true rate | kappa | refused | raw (Wilson) | corrected | plain delta "
        "| bootstrap | kappa analytic | kappa bootstrap |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for i, (tpr, tnr) in enumerate(JUDGES):
        for j, theta in enumerate(PREVALENCE):
            row = simulate(
                tpr, tnr, theta, args.runs, args.n, args.labels, args.bootstrap,
                args.seed * 1000 + i * 10 + j,
            )  # fmt: skip
            worst = min(worst, row.corrected)
            print(
                f"| {tpr} | {tnr} | {theta} | {row.kappa:.3f} | {row.refused} | {row.raw:.1%} "
                f"| {row.corrected:.1%} | {row.delta:.1%} | {row.boot:.1%} "
                f"| {row.kappa_wald:.1%} | {row.kappa_boot:.1%} |"
            )
    print(f"lowest coverage of the corrected interval: {worst:.1%} (target >= 93%)")
    print()
    print(f"human-human kappa, two reviewers on each of {args.labels} items:")
    print("| reviewer error | true rate | kappa | bootstrap coverage |")
    print("|---|---|---|---|")
    for i, error in enumerate((0.05, 0.15)):
        for j, theta in enumerate(PREVALENCE):
            seed = args.seed * 1000 + 500 + i * 10 + j
            truth, cover = human_human(theta, error, args.runs, args.labels, args.bootstrap, seed)
            print(f"| {error} | {theta} | {truth:.3f} | {cover:.1%} |")
    print(
        f"wall {time.perf_counter() - start:.1f} s, CPU {time.process_time() - cpu:.1f} s, "
        f"load {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
