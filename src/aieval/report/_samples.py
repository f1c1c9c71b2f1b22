"""How one stored sample becomes report numbers: the single place that reads SampleRecords.

Every number comes from the sample's :class:`~aieval.core.Verdict`: its pass flag, weighted
score, grade, gates and criteria (the threshold grader's weighted score is 100 x the mean of
the scorer values; a sample whose target failed scores 0.0; a sample with no scores has none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from aieval._numbers import finite
from aieval._records import SampleRecord
from aieval._usage_figures import spent
from aieval.core import CriterionValue, Verdict, ungraded_score

__all__ = [
    "CriterionValue",
    "ExampleNumbers",
    "example_numbers",
    "merge_epochs",
    "numbers_of",
    "ungraded_score",
]

#: The gates of an example without any (one shared, read-only mapping).
_NO_GATES: Mapping[str, bool] = MappingProxyType({})

#: Gate or criterion names containing one of these mark a safety/validation concern.
SEVERE_KEYWORDS: tuple[str, ...] = ("safety", "security", "validation")


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
        unpriced: the sample spent (a model call answered, or its target reported tokens)
            yet has no cost: a total cost over it is unknown.
        weights: the scorers' weights other than 1 in the weighted score, by name.
        pass_share: over the epochs of a run of ``epochs > 1``, the share of its answers that
            passed (``passed`` is then ``pass_share >= 0.5``); ``None`` for one answer.
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
    unpriced: bool = False
    weights: Mapping[str, float] = field(default_factory=dict)

    pass_share: float | None = None

    @property
    def pass_value(self) -> float:
        """The example's pass rate: ``pass_share`` over its epochs, else 0.0 or 1.0."""
        return float(self.passed) if self.pass_share is None else self.pass_share

    @property
    def promotion_score(self) -> float | None:
        """The weighted score recomputed with ``adjusted`` in place of ``normalized`` wherever a
        criterion has one (spec 4.1: promotion decisions use ``adjusted_norm``)."""
        if not self.criteria:
            return self.weighted_score
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
    """Read one sample from a run or a store (see the module docstring for the rules); a
    record built by hand needs its verdict first (a :class:`~aieval.errors.ConfigError` says so).

    Example:
        >>> from aieval.core import Example, GradeInput, ScoreRecord, ThresholdGrader
        >>> s = SampleRecord(id="a", index=0, input="q",
        ...     scores={"f1": ScoreRecord(0.5), "em": ScoreRecord(1.0)})
        >>> s.verdict = ThresholdGrader(0.5).grade(GradeInput(s, Example("a", "q")))
        >>> example_numbers(s).passed, example_numbers(s).weighted_score
        (True, 75.0)
    """
    return numbers_of(sample, sample.graded_verdict())


def numbers_of(sample: SampleRecord, verdict: Verdict) -> ExampleNumbers:
    """The numbers of ``sample`` as ``verdict`` decided them."""
    return ExampleNumbers(
        id=sample.id,
        passed=verdict.passed,
        weighted_score=verdict.weighted_score,
        grade=verdict.grade,
        gates=verdict.gate_map if verdict.gates else _NO_GATES,
        criteria=verdict.criteria,
        scores={name: finite(s.value) for name, s in sample.scores.items()},
        error=sample.error,
        graded=verdict.graded,
        latency_s=sample.latency_s,
        cost=sample.cost,
        unpriced=sample.cost is None and spent(sample),
        weights=verdict.weights,
    )


def merge_epochs(epochs: Sequence[ExampleNumbers], example_id: str) -> ExampleNumbers:
    """One example's numbers over its epochs: each the mean over the epochs that have it.

    ``pass_share`` is the share of epochs passed (``passed``: at least half); a gate holds only
    if it held in every epoch, a criterion's floor likewise; the grade is kept when every epoch
    has the same; the target's error only when every epoch failed. One epoch is returned as it
    is, so a run without epochs compares exactly as before.
    """
    if len(epochs) == 1:
        return epochs[0]
    share = sum(ex.pass_value for ex in epochs) / len(epochs)
    grades = {ex.grade for ex in epochs}
    gates: dict[str, bool] = {}
    for ex in epochs:
        for gate, ok in ex.gates.items():
            gates[gate] = gates.get(gate, True) and ok
    errors = [ex.error for ex in epochs]
    return ExampleNumbers(
        id=example_id,
        passed=share >= 0.5,
        weighted_score=_mean([ex.weighted_score for ex in epochs]),
        grade=grades.pop() if len(grades) == 1 else None,
        gates=gates,
        criteria=_merged_criteria(epochs),
        scores={
            name: _mean([ex.scores.get(name) for ex in epochs])
            for name in dict.fromkeys(n for ex in epochs for n in ex.scores)
        },
        error=errors[0] if all(errors) else None,
        graded=any(ex.graded for ex in epochs),
        latency_s=_mean([ex.latency_s for ex in epochs]),
        cost=_mean([ex.cost for ex in epochs]),
        unpriced=any(ex.unpriced for ex in epochs),
        pass_share=share,
    )


def _merged_criteria(epochs: Sequence[ExampleNumbers]) -> dict[str, CriterionValue]:
    merged: dict[str, CriterionValue] = {}
    for name in dict.fromkeys(n for ex in epochs for n in ex.criteria):
        values = [ex.criteria[name] for ex in epochs if name in ex.criteria]
        floors = [c.floor_passed for c in values if c.floor_passed is not None]
        adjusted = [c.adjusted for c in values]
        merged[name] = replace(
            values[0],
            normalized=sum(c.normalized for c in values) / len(values),
            adjusted=_mean(adjusted) if None not in adjusted else None,
            floor_passed=all(floors) if floors else None,
        )
    return merged


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _matches(name: str, keywords: tuple[str, ...]) -> bool:
    lowered = name.lower()
    return any(k in lowered for k in keywords)
