"""Scorers that covered little of a run: named beside its pass rate, which would hide them.

A run's pass rate counts a sample as passed when every score it has passes, so a check that
was not applicable on every sample (``cost`` with no cost known) leaves the rate as if the
check had never been asked for. Every headline that shows a pass rate names such scorers next
to it, from the per-scorer counts the summary keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ScorerCoverage", "coverage_note", "low_coverage"]

#: A scorer that scored less than this share of its samples (the rest n/a) is named too.
MOSTLY_UNSCORED = 0.5


@dataclass(frozen=True, slots=True)
class ScorerCoverage:
    """How much of a run one scorer scored.

    Attributes:
        name: the scorer's name.
        scored: samples it gave a value.
        not_applicable: samples it found not applicable (n/a).
        errors: samples it failed on, or has no score for because their target failed.
    """

    name: str
    scored: int
    not_applicable: int
    errors: int

    @property
    def samples(self) -> int:
        """The samples the scorer was asked to score (a row's own check: its rows only)."""
        return self.scored + self.not_applicable + self.errors

    @property
    def share(self) -> float:
        """The share of its samples it scored."""
        return self.scored / self.samples if self.samples else 0.0

    def __str__(self) -> str:
        """``cost scored nothing: n/a on all 15 samples``; ``cost scored 3 of 15 samples
        (20%; n/a on 12)``."""
        if self.scored:
            return (
                f"{self.name} scored {self.scored} of {self.samples} samples"
                f" ({self.share:.0%}; {self._why()})"
            )
        return f"{self.name} scored nothing: {self._why()}"

    @property
    def brief(self) -> str:
        """``cost scored nothing``; ``cost scored 20%``: for a table's cell."""
        return f"{self.name} scored {f'{self.share:.0%}' if self.scored else 'nothing'}"

    def _why(self) -> str:
        if self.scored == 0 and (self.not_applicable == 0 or self.errors == 0):
            what = "n/a" if self.not_applicable else "failed"
            return f"{what} on all {self.samples} samples"
        parts = [f"n/a on {self.not_applicable}"] if self.not_applicable else []
        parts += [f"failed on {self.errors}"] if self.errors else []
        return " and ".join(parts) + (f" of {self.samples}" if self.scored == 0 else "")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "samples": self.samples, "text": str(self)}


def low_coverage(scorers: Mapping[str, Mapping[str, Any]]) -> list[ScorerCoverage]:
    """The scorers a pass rate over these per-scorer counts would hide: each that scored no
    sample, and each that scored under half of its samples because most were n/a.

    ``scorers`` maps a name to a summary's counts: ``count`` (or ``n``), ``errors`` and
    ``not_applicable``, as a run's summary and a report's criteria keep them.

    >>> [str(c) for c in low_coverage({"cost": {"count": 0, "errors": 0, "not_applicable": 15},
    ...                                "exact_match": {"count": 15, "errors": 0}})]
    ['cost scored nothing: n/a on all 15 samples']
    """
    found = []
    for name, stats in scorers.items():
        coverage = ScorerCoverage(
            name=name,
            scored=int(stats.get("count", stats.get("n")) or 0),
            not_applicable=int(stats.get("not_applicable") or 0),
            errors=int(stats.get("errors") or 0),
        )
        if not coverage.samples:
            continue
        mostly_na = coverage.not_applicable > coverage.errors
        if coverage.scored == 0 or (mostly_na and coverage.share < MOSTLY_UNSCORED):
            found.append(coverage)
    return found


def coverage_note(low: Iterable[ScorerCoverage], *, brief: bool = False) -> str:
    """The note shown right after a pass rate: ``" (cost scored nothing: n/a on all 15
    samples)"`` (``brief``: ``" (cost scored nothing)"``), or ``""`` when every scorer covered
    its samples."""
    shown = "; ".join(c.brief if brief else str(c) for c in low)
    return f" ({shown})" if shown else ""
