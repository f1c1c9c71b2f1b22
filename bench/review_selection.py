"""How many human labels each review selection needs for a judge-human kappa interval of 0.10,
and how often that interval covers the judge's true kappa on the whole run.

Usage: ``python bench/review_selection.py [--model logistic|calibrated] [--items 5000]
[--reps 40] [--coverage-reps 500] [--cap 1500] [--seed 0]``

Two population models (``--model``):

- ``logistic``: each item's true label is a pass with probability ``--prevalence``; the
  judge's score is a noisy logistic of it (three samples per item, their median the score).
- ``calibrated``: the judge's score is drawn from a U-shaped Beta(0.4, 0.4) (most items
  clear-cut) and the human passes an item with probability equal to that score, so the
  judge's errors concentrate near the threshold, where its score says it is unsure.

The judge's verdict is its score at or above 0.5. The target is the same for every selection:
the judge-human kappa over all items. ``random`` is a simple random sample with the plain
kappa; the other selections are ``aieval.judges.select_items`` queues (stratified by judge
score, design weights), estimated by ``aieval.stats.weighted_agreement`` (stratified cells,
delta-method interval). For each selection the table gives the fewest labels (to 5, found by
bisection) whose mean 95% interval width over ``--reps`` seeded queues is at most ``--width``,
then, at that count, the coverage of the true kappa over ``--coverage-reps`` other queues, the
weighted interval's and (for comparison) the unweighted kappa's of the same labels, and the
coverage of the true TPR and TNR by their weighted intervals. Last, the floor any allocation
over the same strata meets: the variance of kappa with each stratum's true human pass rate
known in advance (Neyman's allocation on it), against a simple random sample's.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Mapping, Sequence

from aieval.judges import DEFAULT_MIX, Judged, select_items
from aieval.stats import WeightedAgreement, cohen_kappa, stratum_sizes, weighted_agreement

MIXES: dict[str, Mapping[str, float] | None] = {
    "random (simple random sample)": None,
    "stratified (Neyman on the label)": {"stratified": 1.0},
    "uncertain (Neyman on kappa)": {"uncertain": 1.0},
    "default: stratified 20 + uncertain 80": DEFAULT_MIX,
    "stratified 40 + uncertain 40 + random 20": {
        "stratified": 0.4,
        "uncertain": 0.4,
        "random": 0.2,
    },
}


def population(
    n: int, prevalence: float, seed: int, model: str
) -> tuple[list[Judged], dict[str, bool]]:
    """``n`` judged items and their true (human) labels."""
    rng = random.Random(seed)
    items, truth = [], {}
    for i in range(n):
        sid = f"s{i}"
        if model == "calibrated":
            score = rng.betavariate(0.4, 0.4)
            items.append(Judged("run", sid, score))
            truth[sid] = rng.random() < score
            continue
        passed = rng.random() < prevalence
        base = 1.6 if passed else -1.6
        samples = tuple(1 / (1 + math.exp(-(base + rng.gauss(0, 1.6)))) for _ in range(3))
        items.append(Judged("run", sid, statistics.median(samples), samples))
        truth[sid] = passed
    return items, truth


class Selection:
    """One way of choosing labels and estimating kappa from them."""

    def __init__(
        self, items: Sequence[Judged], truth: Mapping[str, bool], mix: Mapping[str, float] | None
    ) -> None:
        self.items, self.truth, self.mix = items, truth, mix
        # the spread of each item's samples is fixed: compute it once for the whole bench
        self.by_id = {item.sample_id: item for item in items}

    def draw(self, size: int, seed: int) -> tuple[WeightedAgreement, float]:
        """The weighted agreement of one queue of ``size`` and its labels' unweighted kappa."""
        if self.mix is None:
            chosen = random.Random(seed).sample(list(self.items), size)
            judge = [item.score >= 0.5 for item in chosen]
            human = [self.truth[item.sample_id] for item in chosen]
            found = weighted_agreement(judge, human, None, {"": float(len(self.items))})
            return found, found.kappa.estimate
        picks = select_items(self.items, size, mix=self.mix, seed=seed)
        judge = [self.by_id[p.sample_id].score >= 0.5 for p in picks]
        human = [self.truth[p.sample_id] for p in picks]
        sizes = stratum_sizes((p.stratum, p.weight) for p in picks)
        found = weighted_agreement(judge, human, [p.stratum for p in picks], sizes)
        return found, cohen_kappa(judge, human, zero_division=0.0)


def labels_needed(selection: Selection, width: float, reps: int, seed: int, cap: int) -> int | None:
    """The fewest labels (to 5, up to ``cap``) whose mean interval width over ``reps`` queues
    (the same seeds at every count) is at most ``width``, by bisection; ``None`` when ``cap``
    labels do not reach it."""

    def narrow_enough(size: int) -> bool:
        runs = []
        for rep in range(reps):
            found, _ = selection.draw(size, seed * 1000 + rep)
            runs.append(found.kappa.high - found.kappa.low)
        return statistics.fmean(runs) <= width

    low, high = 0, min(len(selection.items), cap) // 5  # in steps of 5 labels
    if not narrow_enough(high * 5):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if narrow_enough(middle * 5) else (middle, high)
    return high * 5


def coverage(
    selection: Selection, size: int, target: tuple[float, float, float], reps: int, seed: int
) -> tuple[float, float, float, float, float]:
    """How often the weighted interval covers the true kappa, its mean estimate, how often an
    interval of the same width around the unweighted kappa would, and how often the TPR's and
    the TNR's intervals cover theirs."""
    kappa, tpr, tnr = target
    covered = plain_covered = tpr_covered = tnr_covered = 0
    estimates = []
    for rep in range(reps):
        found, plain = selection.draw(size, 10**6 + seed * 10**4 + rep)
        low, high = found.kappa.low, found.kappa.high
        covered += low <= kappa <= high
        tpr_covered += found.tpr is not None and found.tpr.low <= tpr <= found.tpr.high
        tnr_covered += found.tnr is not None and found.tnr.low <= tnr <= found.tnr.high
        half = (high - low) / 2
        plain_covered += plain - half <= kappa <= plain + half
        estimates.append(found.kappa.estimate)
    return (
        covered / reps,
        statistics.fmean(estimates),
        plain_covered / reps,
        tpr_covered / reps,
        tnr_covered / reps,
    )


def floor_ratio(items: Sequence[Judged], truth: Mapping[str, bool]) -> float:
    """The variance of kappa under Neyman's allocation with every stratum's true human pass
    rate known, over a simple random sample's (both per label, before the finite population
    correction): the least share of random's labels any allocation over these strata needs."""
    judge = [item.score >= 0.5 for item in items]
    human = [truth[item.sample_id] for item in items]
    n = len(items)
    cells = [
        (j and h, j and not h, not j and h, not (j or h)) for j, h in zip(judge, human, strict=True)
    ]
    p = [sum(cell[k] for cell in cells) / n for k in range(4)]
    agree, passed, labelled = p[0] + p[3], p[0] + p[1], p[0] + p[2]
    chance = passed * labelled + (1 - passed) * (1 - labelled)
    dj, dh = 2 * labelled - 1, 2 * passed - 1
    slope = [
        ((k in (0, 3)) * (1 - chance) - (dj * (k < 2) + dh * (k in (0, 2))) * (1 - agree))
        / (1 - chance) ** 2
        for k in range(4)
    ]
    influence = [sum(g * c for g, c in zip(slope, cell, strict=True)) for cell in cells]
    random_variance = statistics.pvariance(influence)
    members: dict[str, list[float]] = {}
    for pick in select_items(items, n):  # every item, each with its stratum
        index = int(pick.sample_id[1:])
        members.setdefault(pick.stratum, []).append(influence[index])
    spread = sum(len(m) / n * statistics.pstdev(m) for m in members.values())
    return spread**2 / random_variance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("logistic", "calibrated"), default="logistic")
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--cap", type=int, default=1500)
    parser.add_argument("--prevalence", type=float, default=0.4)
    parser.add_argument("--width", type=float, default=0.10)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--coverage-reps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    items, truth = population(args.items, args.prevalence, args.seed, args.model)
    judge = [item.score >= 0.5 for item in items]
    human = [truth[item.sample_id] for item in items]
    target = cohen_kappa(judge, human)
    tpr = sum(j and h for j, h in zip(judge, human, strict=True)) / sum(human)
    tnr = sum(not (j or h) for j, h in zip(judge, human, strict=True)) / (len(human) - sum(human))
    print(
        f"model {args.model}, {args.items} items, human pass rate"
        f" {sum(human) / len(human):.2f}, judge-human kappa on all of them {target:.3f}"
        f" (TPR {tpr:.3f}, TNR {tnr:.3f});"
        f" target mean 95% interval width {args.width}"
    )
    print(
        "| selection | labels needed | labels vs random | mean kappa | coverage"
        " | unweighted coverage | TPR / TNR coverage |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    base = None
    for name, mix in MIXES.items():
        selection = Selection(items, truth, mix)
        needed = labels_needed(selection, args.width, args.reps, args.seed, args.cap)
        base = base or needed
        ratio = f"{needed / base:.0%}" if needed and base else "-"
        if needed is None:
            print(f"| {name} | > {args.cap} | - | - | - | - | - |", flush=True)
            continue
        covered, mean, plain, tpr_covered, tnr_covered = coverage(
            selection, needed, (target, tpr, tnr), args.coverage_reps, args.seed
        )
        print(
            f"| {name} | {needed} | {ratio} | {mean:.3f} | {covered:.1%} | {plain:.1%}"
            f" | {tpr_covered:.1%} / {tnr_covered:.1%} |",
            flush=True,
        )
    print(
        f"floor: Neyman's allocation with the true pass rates over these strata needs"
        f" {floor_ratio(items, truth):.0%} of random's labels (variance per label)"
    )
    print(f"wall {time.perf_counter() - started:.1f} s, CPU {time.process_time() - cpu:.1f} s")


if __name__ == "__main__":
    main()
