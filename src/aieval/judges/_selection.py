"""Which judged samples a review queue asks people to label (pure, seeded).

Three ways, mixed by shares: ``stratified`` spreads the labels over the judge's score range
(equal-width bins, the same count from each while a bin has items), ``uncertain`` takes the items
the judge is least sure of (nearest the threshold, its samples' disagreement counted as
nearness), and
``random`` is a uniform control slice over everything (what agreement is checked against).
Each pick keeps why it was chosen. The same inputs and seed give the same picks.
"""

from __future__ import annotations

import math
import random
import statistics
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


@dataclass(frozen=True, slots=True)
class Judged:
    """One judged sample: the judge's score (0..1) and its samples' scores, if several."""

    run_id: str
    sample_id: str
    score: float
    verdicts: tuple[float, ...] = ()

    @property
    def spread(self) -> float:
        """How much the judge's samples disagree (their standard deviation; 0 for one)."""
        return statistics.pstdev(self.verdicts) if len(self.verdicts) > 1 else 0.0


@dataclass(frozen=True, slots=True)
class Pick:
    """A chosen item and why (``stratified:<bin>``, ``uncertain`` or ``random``)."""

    run_id: str
    sample_id: str
    stratum: str


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


def _counts(size: int, mix: Mapping[str, float]) -> dict[str, int]:
    """``size`` split by the shares of ``mix`` (largest remainders)."""
    total = sum(mix.values())
    exact = {name: size * share / total for name, share in mix.items()}
    counts = {name: int(value) for name, value in exact.items()}
    left = size - sum(counts.values())
    for name in sorted(exact, key=lambda n: (counts[n] - exact[n], SELECTIONS.index(n)))[:left]:
        counts[name] += 1
    return counts


def select_items(
    judged: Sequence[Judged],
    size: int,
    *,
    threshold: float = 0.5,
    mix: Mapping[str, float] = DEFAULT_MIX,
    seed: int = 0,
    bins: int = 5,
) -> list[Pick]:
    """Pick ``size`` items of ``judged`` (all of them when fewer), mixed by ``mix``, in a
    seeded serving order that interleaves the ways (a queue stopped early keeps the mix)."""
    if size < 1:
        raise ConfigError(f"a review queue needs a size of at least 1, not {size}")
    for name in mix:
        if name not in SELECTIONS:
            raise ConfigError(f"unknown selection {name!r}; use {', '.join(SELECTIONS)}")
    rng = random.Random(seed)
    left = list(judged)
    counts = _counts(min(size, len(left)), mix)
    picks: list[Pick] = []
    # the control slice first, uniform over every item; then the others from what is left
    for name in ("random", "stratified", "uncertain"):
        want = counts.get(name, 0)
        if not want or not left:
            continue
        if name == "random":
            chosen = [(item, "random") for item in rng.sample(left, min(want, len(left)))]
        elif name == "stratified":
            chosen = _stratified(left, want, bins, rng)
        else:
            chosen = _uncertain(left, want, threshold)
        taken = {id(item) for item, _ in chosen}
        left = [item for item in left if id(item) not in taken]
        picks.extend(Pick(item.run_id, item.sample_id, why) for item, why in chosen)
    rng.shuffle(picks)
    return picks


def _stratified(
    items: Sequence[Judged], want: int, bins: int, rng: random.Random
) -> list[tuple[Judged, str]]:
    """``want`` items spread evenly over ``bins`` equal-width bins of the judge's score."""
    strata: list[list[Judged]] = [[] for _ in range(bins)]
    for item in items:
        strata[min(int(item.score * bins), bins - 1)].append(item)
    for stratum in strata:
        rng.shuffle(stratum)
    chosen: list[tuple[Judged, str]] = []
    while len(chosen) < want and any(strata):
        for b, stratum in enumerate(strata):
            if stratum and len(chosen) < want:
                low = b / bins
                chosen.append((stratum.pop(), f"stratified:{low:.1f}-{low + 1 / bins:.1f}"))
    return chosen


def _uncertain(items: Sequence[Judged], want: int, threshold: float) -> list[tuple[Judged, str]]:
    """The ``want`` items the judge is least sure of: nearest the threshold, each item's
    distance shortened by how much its samples disagree (ties in input order)."""
    ranked = sorted(items, key=lambda item: abs(item.score - threshold) - item.spread)
    return [(item, "uncertain") for item in ranked[:want]]
