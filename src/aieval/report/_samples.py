"""How one stored sample becomes report numbers: the single place that reads SampleRecords.

A graded sample (one with ``extra["evaluation"]``, a workflow evaluation payload) takes its
weighted score, grade, gates and criteria from that payload. An ungraded sample's weighted
score is 100 x the mean of its scorer values; a sample whose target failed scores 0.0; a sample
with no scores has none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval._records import SampleRecord

__all__ = ["CriterionValue", "ExampleNumbers", "example_numbers"]

#: Gate or criterion names containing one of these mark a safety/validation concern.
SEVERE_KEYWORDS: tuple[str, ...] = ("safety", "security", "validation")


@dataclass(frozen=True, slots=True)
class CriterionValue:
    """One graded criterion of one example.

    Attributes:
        normalized: the normalized value in 0..1.
        adjusted: the small-sample ``adjusted_norm``, when the criterion has one.
        weight: the criterion's weight.
        floor: its critical floor (0..1), if it has one.
        floor_passed: whether the floor held (``None`` without a floor).
        kind: ``objective``, ``judge``, ``efficiency``...
    """

    normalized: float
    adjusted: float | None = None
    weight: float = 1.0
    floor: float | None = None
    floor_passed: bool | None = None
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class ExampleNumbers:
    """The numbers of one example of one run that reports and promotion decisions use.

    Attributes:
        id: the example id.
        passed: the sample's pass flag.
        weighted_score: 0..100, or ``None`` when nothing was scored.
        grade: the letter grade of a graded sample.
        gates: ``{gate: passed}`` of a graded sample.
        criteria: graded criteria by name.
        scores: scorer values (0..1; ``None`` where the scorer failed) by scorer name.
        error: the target's error, if it failed.
        graded: whether the sample carries a workflow evaluation.
        latency_s: the target's latency.
        cost: the sample's cost.
    """

    id: str
    passed: bool = False
    weighted_score: float | None = None
    grade: str | None = None
    gates: Mapping[str, bool] = field(default_factory=dict)
    criteria: Mapping[str, CriterionValue] = field(default_factory=dict)
    scores: Mapping[str, float | None] = field(default_factory=dict)
    error: str | None = None
    graded: bool = False
    latency_s: float | None = None
    cost: float | None = None

    @property
    def promotion_score(self) -> float | None:
        """The weighted score recomputed with ``adjusted`` in place of ``normalized`` wherever a
        criterion has one (spec 4.1: promotion decisions use ``adjusted_norm``)."""
        if not any(c.adjusted is not None for c in self.criteria.values()):
            return self.weighted_score
        total = sum(c.weight for c in self.criteria.values())
        if total <= 0:
            return self.weighted_score
        used = sum(
            c.weight * (c.adjusted if c.adjusted is not None else c.normalized)
            for c in self.criteria.values()
        )
        return 100.0 * used / total

    @property
    def gate_failed(self) -> bool:
        """Whether any hard gate failed."""
        return not all(self.gates.values())

    def floor_violations(self) -> set[str]:
        """Names of the criteria whose critical floor was missed."""
        return {name for name, c in self.criteria.items() if c.floor_passed is False}

    def severe(self, severe_gates: tuple[str, ...], keywords: tuple[str, ...]) -> list[str]:
        """The severe failures of this example: severe gates failed, and safety/validation
        criteria below their floor (a name containing one of ``keywords`` is severe)."""
        found = [
            f"gate {name}"
            for name, ok in self.gates.items()
            if not ok and (name in severe_gates or _matches(name, keywords))
        ]
        found += [
            f"criterion {name} below floor"
            for name, c in self.criteria.items()
            if c.floor_passed is False and _matches(name, keywords)
        ]
        return found


def example_numbers(sample: SampleRecord) -> ExampleNumbers:
    """Read one stored sample (see the module docstring for the rules).

    Example:
        >>> from aieval._records import ScoreRecord
        >>> s = SampleRecord(id="a", index=0, input="q", passed=True,
        ...     scores={"f1": ScoreRecord(0.5), "em": ScoreRecord(1.0)})
        >>> example_numbers(s).weighted_score
        75.0
    """
    scores = {name: _finite(s.value) for name, s in sample.scores.items()}
    evaluation = sample.extra.get("evaluation")
    if isinstance(evaluation, Mapping):
        return ExampleNumbers(
            id=sample.id,
            passed=bool(sample.passed),
            weighted_score=_finite(evaluation.get("weighted_score")),
            grade=_text(evaluation.get("grade")),
            gates={str(k): bool(v) for k, v in (evaluation.get("hard_gates") or {}).items()},
            criteria=_criteria(evaluation.get("criteria")),
            scores=scores,
            error=sample.error,
            graded=True,
            latency_s=sample.latency_s,
            cost=sample.cost,
        )
    return ExampleNumbers(
        id=sample.id,
        passed=bool(sample.passed),
        weighted_score=ungraded_score(sample.error, scores),
        scores=scores,
        error=sample.error,
        latency_s=sample.latency_s,
        cost=sample.cost,
    )


def ungraded_score(error: str | None, scores: Mapping[str, float | None]) -> float | None:
    """0..100 mean of the scorer values (0 when the target failed; ``None`` if none scored)."""
    if error is not None:
        return 0.0
    values = [v for v in scores.values() if v is not None]
    return 100.0 * sum(values) / len(values) if values else None


def _criteria(items: Any) -> dict[str, CriterionValue]:
    out: dict[str, CriterionValue] = {}
    for item in items or ():
        if not isinstance(item, Mapping) or "name" not in item:
            continue
        normalized = _finite(item.get("normalized"))
        if normalized is None:
            continue
        floor_passed = item.get("floor_passed")
        out[str(item["name"])] = CriterionValue(
            normalized=normalized,
            adjusted=_finite(item.get("adjusted")),
            weight=_finite(item.get("weight")) or 0.0,
            floor=_finite(item.get("floor")),
            floor_passed=None if floor_passed is None else bool(floor_passed),
            kind=_text(item.get("kind")),
        )
    return out


def _matches(name: str, keywords: tuple[str, ...]) -> bool:
    lowered = name.lower()
    return any(k in lowered for k in keywords)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
