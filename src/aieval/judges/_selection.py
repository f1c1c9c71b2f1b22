"""Which judged samples a review queue asks people to label (pure, seeded).

The queue is a stratified sample, so agreement measured on it can be weighted back to the
whole run. The strata are bins of the judge's score, half below the pass threshold and half
above it, so each stratum has one judge verdict; a judge sampled several times whose samples
disagree is placed nearer the threshold (their standard deviation is taken off the distance).
Three ways share the labels, mixed by shares: ``stratified`` allocates by Neyman (a stratum's
count proportional to its size times the spread of the human label expected there, from the
judge's own mean score), ``uncertain`` gives its share to the two strata next to the threshold,
and ``random`` allocates in proportion to size (a uniform control). Within a stratum the items
are a simple random sample, so each pick carries its design weight: the stratum's size over the
items drawn from it. The same inputs and seed give the same picks.
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
#: The default mix: most labels where they teach most, a fifth as an unbiased control.
DEFAULT_MIX: Mapping[str, float] = {"stratified": 0.4, "uncertain": 0.4, "random": 0.2}
#: The least spread a stratum is given in the Neyman allocation, so none is left unsampled.
SPREAD_FLOOR = 0.1


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
    """``stratified``, or ``stratified=40,uncertain=40,random=20`` (shares, any scale).

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
    bins: int = 6,
) -> list[Pick]:
    """Pick ``size`` items of ``judged`` (all of them when fewer) as a stratified sample over
    ``bins`` judge-score strata, allocated by the shares of ``mix``, in a seeded serving order
    (a queue stopped early is still a random sample within each stratum).

    Every stratum with items gets at least one pick when ``size`` is at least the number of
    such strata (two when it is twice that), so every judged sample can be drawn and the
    weights are unbiased. A smaller queue may leave a stratum out: its weights then stand for
    the strata it drew.
    """
    if size < 1:
        raise ConfigError(f"a review queue needs a size of at least 1, not {size}")
    if bins < 2:
        raise ConfigError(f"a review queue needs at least 2 score bins, not {bins}")
    for name in mix:
        if name not in SELECTIONS:
            raise ConfigError(f"unknown selection {name!r}; use {', '.join(SELECTIONS)}")
    rng = random.Random(seed)
    strata = _strata([(item, item.spread) for item in judged], threshold, bins)
    counts = _allocate(strata, min(size, len(judged)), mix, bins // 2)
    picks: list[Pick] = []
    for (label, members), n in zip(strata, counts, strict=True):
        if n:
            weight = len(members) / n
            picks.extend(
                Pick(item.run_id, item.sample_id, label, weight)
                for item, _ in rng.sample(members, n)
            )
    rng.shuffle(picks)
    return picks


def _strata(
    judged: Sequence[tuple[Judged, float]], threshold: float, bins: int
) -> list[tuple[str, list[tuple[Judged, float]]]]:
    """The judged items in ``bins`` equal-width bins of their effective score: ``bins // 2``
    below the threshold, the rest above it, over 0..1 or the scores' wider range (a judge
    may score on another scale); the effective score moves toward the threshold by the spread
    of the judge's samples (never across it)."""
    lo = min([0.0, threshold, *(item.score for item, _ in judged)])
    hi = max([1.0, threshold, *(item.score for item, _ in judged)])
    below, above = bins // 2, bins - bins // 2
    low_width, high_width = (threshold - lo) / below, (hi - threshold) / above
    edges = [lo + low_width * i for i in range(below)]
    edges += [threshold + high_width * i for i in range(above)]
    labels = [f"{a:.2f}-{b:.2f}" for a, b in zip(edges, [*edges[1:], hi], strict=True)]
    members: list[list[tuple[Judged, float]]] = [[] for _ in range(bins)]
    for item, spread in judged:
        if item.score >= threshold:
            step = (
                (max(threshold, item.score - spread) - threshold) / high_width if high_width else 0
            )
            index = below + min(int(step), above - 1)
        else:
            step = (min(threshold, item.score + spread) - lo) / low_width if low_width else 0
            index = max(0, min(int(step), below - 1))
        members[index].append((item, spread))
    return list(zip(labels, members, strict=True))


def _allocate(
    strata: Sequence[tuple[str, Sequence[tuple[Judged, float]]]],
    size: int,
    mix: Mapping[str, float],
    near: int,
) -> list[int]:
    """How many items each stratum gives: the shares' targets (random: by size; stratified:
    Neyman, size times expected spread; uncertain: Neyman over the strata next to the
    threshold, or the nearest strata with items), rounded one item at a time to the stratum
    furthest below its target, at least one per stratum (two when ``size`` allows), never more
    than a stratum holds."""
    sizes = [len(members) for _, members in strata]
    spreads = [_expected_spread(members) for _, members in strata]
    total_share = sum(mix.values())
    target = [0.0] * len(strata)

    def spread_over(indices: Sequence[int], share: float, neyman: bool) -> None:
        mass = [sizes[i] * (spreads[i] if neyman else 1.0) for i in indices]
        if sum(mass) <= 0:
            return
        for i, m in zip(indices, mass, strict=True):
            target[i] += size * share / total_share * m / sum(mass)

    everything = range(len(strata))
    spread_over(everything, mix.get("random", 0.0), neyman=False)
    spread_over(everything, mix.get("stratified", 0.0), neyman=True)
    filled = [i for i in everything if sizes[i]]
    nearest = min((_gap(i, near) for i in filled), default=0)
    closest = [i for i in filled if _gap(i, near) == nearest]
    spread_over(closest, mix.get("uncertain", 0.0), neyman=True)

    least = 2 if size >= 2 * len(filled) else 1 if size >= len(filled) else 0
    counts = [min(least, n) for n in sizes]
    while sum(counts) < size:
        room = [i for i in everything if counts[i] < sizes[i]]
        counts[max(room, key=lambda i: (target[i] - counts[i], -i))] += 1
    return counts


def _gap(index: int, near: int) -> int:
    """How many strata lie between stratum ``index`` and the threshold."""
    return near - 1 - index if index < near else index - near


def _expected_spread(members: Sequence[tuple[Judged, float]]) -> float:
    """The standard deviation of a human pass label expected in a stratum, taking the judge's
    mean score there as the pass probability (and its samples' disagreement as a lower bound),
    floored at :data:`SPREAD_FLOOR`."""
    if not members:
        return 0.0
    mean = math.fsum(item.score for item, _ in members) / len(members)
    spread = math.fsum(spread for _, spread in members) / len(members)
    mean = min(max(mean, 0.0), 1.0)  # a judge on another scale: its spread alone, or the floor
    return max(math.sqrt(mean * (1 - mean)), spread, SPREAD_FLOOR)
