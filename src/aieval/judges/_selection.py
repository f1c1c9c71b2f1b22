"""Which judged samples a review queue asks people to label (pure, seeded).

The queue is a stratified sample, so agreement measured on it can be weighted back to the
whole run. The strata are bins of near-equal count of the judge's score (quantiles), half below
the pass threshold and half above it, so each stratum has one judge verdict; a judge sampled
several times whose samples disagree is placed nearer the threshold (by their standard error).

Since the judge's verdict is known for every item, only the human pass rate in each stratum is
estimated, and each stratum adds to the variance of kappa its share squared, times its influence
on kappa squared, times the human label's spread there, over its labels. The allocation plans
with the human pass rate the judge's own score leads one to expect (the threshold as 0.5). Three
ways share the labels, mixed by shares: ``uncertain`` is the Neyman allocation for kappa (a
stratum's count in proportion to its size, its expected spread and its influence on kappa: the
labels go where the judge is unsure), ``stratified`` the Neyman allocation for the human label
with its spread floored at :data:`SPREAD_FLOOR` (no stratum is left thin, should the judge be
wrong where it is sure), and ``random`` allocates in proportion to size (a uniform control).
Within a stratum the items are a simple random sample, so each pick carries its design weight:
the stratum's size over the items drawn from it. The same inputs and seed give the same picks.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.errors import ConfigError

__all__ = [
    "DEFAULT_MIX",
    "SELECTIONS",
    "Judged",
    "Pick",
    "parse_mix",
    "select_items",
    "verdict_values",
]

SELECTIONS = ("stratified", "uncertain", "random")
#: The default mix: most labels where they narrow kappa's interval most, a fifth floored so
#: that the strata where the judge is sure are still checked.
DEFAULT_MIX: Mapping[str, float] = {"stratified": 0.2, "uncertain": 0.8}
#: The least spread a stratum is given in the ``stratified`` allocation, so none is left thin.
SPREAD_FLOOR = 0.1
#: How many judge-score strata a queue has (fewer when the scores take fewer values).
DEFAULT_BINS = 20


@dataclass(frozen=True, slots=True)
class Judged:
    """One judged sample: the judge's score (0..1) and its samples' scores, if several."""

    run_id: str
    sample_id: str
    score: float
    verdicts: tuple[float, ...] = ()

    @property
    def spread(self) -> float:
        """How much the judge's samples disagree (their population standard deviation; 0 for
        one). In floats: ``statistics.pstdev`` is exact but far slower on a large run."""
        if len(self.verdicts) < 2:
            return 0.0
        mean = math.fsum(self.verdicts) / len(self.verdicts)
        return math.sqrt(math.fsum((v - mean) ** 2 for v in self.verdicts) / len(self.verdicts))


@dataclass(frozen=True, slots=True)
class Pick:
    """A chosen item, its stratum (the judge-score bin, e.g. ``0.50-0.67``) and its design
    weight: how many judged samples it stands for (the stratum's size over its picks)."""

    run_id: str
    sample_id: str
    stratum: str
    weight: float = 1.0


def verdict_values(metadata: Mapping[str, Any] | None) -> tuple[float, ...]:
    """The normalized scores of a judge's samples in a score's metadata (``verdicts``); values
    that are not finite numbers in 0..1 are left out."""
    verdicts = (metadata or {}).get("verdicts")
    if not isinstance(verdicts, list):
        return ()
    out = []
    for verdict in verdicts:
        value = verdict.get("normalized") if isinstance(verdict, dict) else None
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if math.isfinite(value) and 0 <= value <= 1:
            out.append(float(value))
    return tuple(out)


def parse_mix(text: str) -> dict[str, float]:
    """``stratified``, or ``stratified=20,uncertain=80`` (shares, any scale).

    Raises:
        ConfigError: an unknown selection or a share that is not a non-negative number.
    """
    mix: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, _, share = part.partition("=")
        name = name.strip()
        if name not in SELECTIONS:
            raise ConfigError(
                f"--selection: unknown selection {name!r}; use {', '.join(SELECTIONS)}"
            )
        try:
            value = float(share) if share else 1.0
        except ValueError:
            raise ConfigError(f"--selection: share {share!r} of {name!r} is not a number") from None
        if not (math.isfinite(value) and value >= 0):
            raise ConfigError(f"--selection: share of {name!r} must be a number >= 0")
        mix[name] = mix.get(name, 0.0) + value
    if not mix or sum(mix.values()) <= 0:
        raise ConfigError("--selection names no selection with a share above 0")
    return mix


def select_items(
    judged: Sequence[Judged],
    size: int,
    *,
    threshold: float = 0.5,
    mix: Mapping[str, float] = DEFAULT_MIX,
    seed: int = 0,
    bins: int = DEFAULT_BINS,
) -> list[Pick]:
    """Pick ``size`` items of ``judged`` (all of them when fewer) as a stratified sample over
    up to ``bins`` judge-score strata, allocated by the shares of ``mix``, in a seeded serving
    order (a queue stopped early is still a random sample within each stratum).

    A queue of fewer than twice ``bins`` items gets ``size // 2`` strata (at least two), so
    every stratum gives at least two picks (one when a stratum holds one item): every judged
    sample can be drawn and the weights are unbiased. A queue of one to three items may leave
    a stratum out: its weights then stand for the strata it drew.
    """
    if size < 1:
        raise ConfigError(f"a review queue needs a size of at least 1, not {size}")
    if bins < 2:
        raise ConfigError(f"a review queue needs at least 2 score bins, not {bins}")
    for name in mix:
        if name not in SELECTIONS:
            raise ConfigError(f"unknown selection {name!r}; use {', '.join(SELECTIONS)}")
    rng = random.Random(seed)
    size = min(size, len(judged))
    # fewer, wider strata for a small queue, so that each can still give two labels
    strata = _strata(judged, threshold, max(2, min(bins, size // 2)))
    counts = _allocate(strata, size, mix)
    picks: list[Pick] = []
    for stratum, n in zip(strata, counts, strict=True):
        if n:
            weight = len(stratum.members) / n
            picks.extend(
                Pick(item.run_id, item.sample_id, stratum.label, weight)
                for item in rng.sample(stratum.members, n)
            )
    rng.shuffle(picks)
    return picks


@dataclass(frozen=True, slots=True)
class _Stratum:
    """A bin of judged items sharing the judge's verdict, and the human pass rate the judge's
    scores lead one to expect there (the plan of the allocation, never an estimate)."""

    label: str
    members: list[Judged]
    passed: bool
    expected: float


def _strata(judged: Sequence[Judged], threshold: float, bins: int) -> list[_Stratum]:
    """The judged items in up to ``bins`` bins of near-equal count (quantiles of their effective
    score), ``bins // 2`` below the threshold and the rest above it; equal scores share a bin.

    The effective score moves toward the threshold by the standard error of the judge's
    samples (their spread over the square root of their number; never across it). A bin's
    expected human pass rate is its mean effective score placed on 0..1: the threshold at 0.5
    and the ends of the judge's range (0..1, or its scores' wider range) at 0 and 1.
    """
    lo = min([0.0, threshold, *(item.score for item in judged)])
    hi = max([1.0, threshold, *(item.score for item in judged)])
    below: list[tuple[float, Judged]] = []
    above: list[tuple[float, Judged]] = []
    for item in judged:
        error = item.spread / math.sqrt(len(item.verdicts)) if item.verdicts else 0.0
        if item.score >= threshold:
            above.append((max(threshold, item.score - error), item))
        else:
            below.append((min(threshold, item.score + error), item))

    def place(score: float) -> float:
        if score >= threshold:
            return 0.5 + 0.5 * (score - threshold) / (hi - threshold) if hi > threshold else 1.0
        return 0.5 * (score - lo) / (threshold - lo) if threshold > lo else 0.0

    groups: list[tuple[bool, list[tuple[float, Judged]]]] = []
    for passed, side, count in ((False, below, bins // 2), (True, above, bins - bins // 2)):
        groups.extend((passed, group) for group in _quantile_groups(side, count))
    labels = _labels([(group[0][0], group[-1][0]) for _, group in groups])
    return [
        _Stratum(
            label,
            [item for _, item in group],
            passed,
            math.fsum(place(score) for score, _ in group) / len(group),
        )
        for label, (passed, group) in zip(labels, groups, strict=True)
    ]


def _quantile_groups(
    scored: list[tuple[float, Judged]], count: int
) -> list[list[tuple[float, Judged]]]:
    """``scored`` in score order, cut into up to ``count`` runs of near-equal length; a cut
    never falls between equal scores (it moves to the nearer end of their run)."""
    ordered = sorted(scored, key=lambda pair: (pair[0], pair[1].score))
    groups: list[list[tuple[float, Judged]]] = []
    start = 0
    for k in range(1, count + 1):
        end = round(len(ordered) * k / count)
        if 0 < end < len(ordered) and _key(ordered[end]) == _key(ordered[end - 1]):
            # inside a run of equal scores: cut at its nearer end (its far end if the near
            # one would leave this bin empty)
            low = high = end
            while low > start and _key(ordered[low - 1]) == _key(ordered[end]):
                low -= 1
            while high < len(ordered) and _key(ordered[high]) == _key(ordered[end]):
                high += 1
            end = low if low > start and end - low <= high - end else high
        if end > start:
            groups.append(ordered[start:end])
            start = end
    return groups


def _key(pair: tuple[float, Judged]) -> tuple[float, float]:
    return pair[0], pair[1].score


def _labels(ranges: Sequence[tuple[float, float]]) -> list[str]:
    """A distinct name per bin from its score range, with as many decimals as that takes."""
    for decimals in range(2, 7):
        labels = [f"{a:.{decimals}f}-{b:.{decimals}f}" for a, b in ranges]
        if len(set(labels)) == len(labels):
            return labels
    return [f"{label}#{i}" for i, label in enumerate(labels)]


def _allocate(strata: Sequence[_Stratum], size: int, mix: Mapping[str, float]) -> list[int]:
    """How many items each stratum gives: the shares' targets (random: by size; stratified:
    Neyman on the human label, size times its expected spread, floored; uncertain: Neyman on
    kappa, size times the expected spread times the stratum's influence on kappa), rounded one
    item at a time to the stratum furthest below its target, at least one per stratum (two
    when ``size`` allows), never more than a stratum holds."""
    sizes = [len(s.members) for s in strata]
    spreads = [math.sqrt(s.expected * (1 - s.expected)) for s in strata]
    influence = _influence(strata)
    masses: dict[str, list[float]] = {
        "random": [float(n) for n in sizes],
        "stratified": [n * max(d, SPREAD_FLOOR) for n, d in zip(sizes, spreads, strict=True)],
        "uncertain": [n * d * c for n, d, c in zip(sizes, spreads, influence, strict=True)],
    }
    total_share = sum(mix.values())
    target = [0.0] * len(strata)
    for name, share in mix.items():
        mass = masses[name]
        whole = math.fsum(mass)
        if share > 0 and whole > 0:
            for i, m in enumerate(mass):
                target[i] += size * share / total_share * m / whole
    least = 2 if size >= 2 * len(strata) else 1 if size >= len(strata) else 0
    counts = [min(least, n) for n in sizes]
    while sum(counts) < size:
        room = [i for i in range(len(strata)) if counts[i] < sizes[i]]
        counts[max(room, key=lambda i: (target[i] - counts[i], -i))] += 1
    return counts


def _influence(strata: Sequence[_Stratum]) -> list[float]:
    """How much a change in each stratum's human pass rate moves kappa, from the expected
    rates: the judge's own pass share is known, so only the human side varies. The derivative
    of kappa in a judge-pass stratum's rate is ``((1 - pe) - (2J - 1)(1 - po)) / (1 - pe)^2``,
    in a judge-fail stratum's ``((1 - pe) + (2J - 1)(1 - po)) / (1 - pe)^2`` (J the judge's
    pass share, po the agreement, pe the agreement by chance); the common factor is dropped."""
    total = sum(len(s.members) for s in strata)
    if not total:
        return [1.0] * len(strata)
    judge = sum(len(s.members) for s in strata if s.passed) / total
    human = math.fsum(len(s.members) * s.expected for s in strata) / total
    agree = (
        math.fsum(len(s.members) * (s.expected if s.passed else 1 - s.expected) for s in strata)
        / total
    )
    chance = judge * human + (1 - judge) * (1 - human)
    tilt = (2 * judge - 1) * (1 - agree)
    influence = [abs((1 - chance) + (-tilt if s.passed else tilt)) for s in strata]
    # a judge of one verdict throughout has no kappa to narrow: plan on the label alone
    return influence if chance < 1 and any(influence) else [1.0] * len(strata)
