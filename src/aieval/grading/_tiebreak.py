"""Ordering of two runs whose weighted scores are near-equal (spec 5.2 tie-breakers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from aieval.grading._grade import GradeResult

__all__ = ["NEAR_EQUAL", "RunStanding", "TieBreak", "tie_break"]

#: Weighted scores closer than this (on 0..100) are near-equal and go to the tie-breakers.
NEAR_EQUAL = 1.0

_SAFETY = ("safety", "validation")


@dataclass(frozen=True, slots=True)
class RunStanding:
    """What the tie-breakers compare for one run.

    Attributes:
        weighted_score: the run's weighted score on 0..100.
        gate_failures: number of failed hard gates (lower is better).
        correctness: objective correctness score in 0..1 (higher is better).
        safety: safety/validation score in 0..1 (higher is better).
        p95_latency: p95 latency in seconds (lower is better).
        cost: cost in currency units (lower is better).
    """

    weighted_score: float
    gate_failures: int = 0
    correctness: float | None = None
    safety: float | None = None
    p95_latency: float | None = None
    cost: float | None = None

    @classmethod
    def from_grade(
        cls, result: GradeResult, *, p95_latency: float | None = None, cost: float | None = None
    ) -> RunStanding:
        """Read the standing of a graded run: correctness and safety are the mean normalized
        scores of criteria whose category (or name) is ``correctness`` / ``safety`` or
        ``validation``."""

        def mean_of(keys: tuple[str, ...]) -> float | None:
            vals = [c.used for c in result.criteria if (c.category or c.name) in keys]
            return sum(vals) / len(vals) if vals else None

        return cls(
            weighted_score=result.weighted_score,
            gate_failures=len(result.gate_failures),
            correctness=mean_of(("correctness",)),
            safety=mean_of(_SAFETY),
            p95_latency=p95_latency,
            cost=cost,
        )


@dataclass(frozen=True, slots=True)
class TieBreak:
    """Which of two runs ranks first, and by which rule.

    Attributes:
        winner: ``"a"``, ``"b"``, or ``None`` when nothing separates them.
        rule: ``weighted_score``, ``gate_failures``, ``correctness``, ``safety``,
            ``p95_latency``, ``cost``, or ``tie``.
        reason: one sentence for reports.
        values: run a's and run b's value on ``rule`` (``None`` for a tie).
    """

    winner: Literal["a", "b"] | None
    rule: str
    reason: str
    values: tuple[float, float] | None = None


_Rule = tuple[str, Callable[[RunStanding], float | None], bool]
_RULES: tuple[_Rule, ...] = (
    ("gate_failures", lambda r: float(r.gate_failures), False),
    ("correctness", lambda r: r.correctness, True),
    ("safety", lambda r: r.safety, True),
    ("p95_latency", lambda r: r.p95_latency, False),
    ("cost", lambda r: r.cost, False),
)


def tie_break(a: RunStanding, b: RunStanding) -> TieBreak:
    """Order two runs: by weighted score unless they are within 1.0, then by the tie-breakers.

    The tie-breakers, in order: fewer hard-gate failures, higher objective correctness, higher
    safety/validation, lower p95 latency, lower cost. A rule is skipped when either run lacks
    its value. If every rule ties, the higher weighted score wins, if any.

    Example:
        >>> tie_break(RunStanding(80.4, correctness=0.9), RunStanding(80.9, correctness=0.8)).rule
        'correctness'
    """
    diff = a.weighted_score - b.weighted_score
    if abs(diff) >= NEAR_EQUAL:
        return _decide(diff > 0, "weighted_score", a.weighted_score, b.weighted_score)
    for rule, get, higher_wins in _RULES:
        va, vb = get(a), get(b)
        if va is None or vb is None or va == vb:
            continue
        return _decide((va > vb) == higher_wins, rule, va, vb)
    if diff:
        return _decide(diff > 0, "weighted_score", a.weighted_score, b.weighted_score)
    return TieBreak(None, "tie", "the runs are equal on every tie-breaker")


def _decide(a_wins: bool, rule: str, va: float, vb: float) -> TieBreak:
    winner: Literal["a", "b"] = "a" if a_wins else "b"
    reason = f"run {winner} ranks first on {rule} ({va:.4g} vs {vb:.4g})"
    return TieBreak(winner, rule, reason, (va, vb))
