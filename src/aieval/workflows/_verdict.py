"""A sample's :class:`~aieval.core.Verdict` from its typed workflow evaluation.

The grade, gates, criteria, weighted score and reasons come from the evaluation's own typed
results (its gates and its :class:`~aieval.grading.GradeResult`); the evaluation's stored form
is kept as the verdict's ``workflow`` detail.
"""

from __future__ import annotations

import math

from aieval.core import CriterionValue, GateOutcome, Reason, SampleRecord, Verdict, scorer_reasons
from aieval.grading import GradeResult
from aieval.workflows._evaluate import WorkflowEvaluation

__all__ = ["workflow_verdict"]


def workflow_verdict(
    evaluation: WorkflowEvaluation, record: SampleRecord, grader: str = "workflow"
) -> Verdict:
    """The verdict on ``record`` given its run's ``evaluation`` (passed as evaluated)."""
    explained = {g.name: g.reason for g in evaluation.gate_results}
    gates = tuple(
        GateOutcome(name, ok, explained.get(name)) for name, ok in evaluation.hard_gates.items()
    )
    reasons: tuple[Reason, ...] = ()
    if not evaluation.passed:
        reasons = scorer_reasons(record) + _reasons(evaluation)
    graded = evaluation.graded
    score = evaluation.weighted_score
    return Verdict(
        passed=evaluation.passed,
        reasons=reasons,
        weighted_score=float(score) if score is not None and math.isfinite(score) else None,
        grade=evaluation.grade,
        gates=gates,
        criteria=_criteria(graded) if graded is not None else {},
        grader=grader,
        workflow=evaluation.to_dict(),
    )


def _reasons(evaluation: WorkflowEvaluation) -> tuple[Reason, ...]:
    """The failed gates, the missed critical floors, then a weighted score below the mark."""
    found = [Reason("gate", g.name, g.reason or "failed") for g in evaluation.gate_failures]
    if evaluation.graded is not None:
        found += [
            # the score itself stays out of the text so that misses of one floor group
            Reason("floor", f.criterion, f"below its critical floor {f.floor}")
            for f in evaluation.graded.floor_failures
        ]
    if evaluation.reason == "below_threshold":
        limit = evaluation.pass_threshold
        found.append(Reason("threshold", "weighted_score", f"weighted score below {limit}"))
    return tuple(found)


def _criteria(graded: GradeResult) -> dict[str, CriterionValue]:
    """The graded criteria with a finite normalized value, by name."""
    return {
        c.name: CriterionValue(
            normalized=float(c.norm),
            adjusted=_finite(c.adjusted_norm),
            weight=_finite(c.weight) or 0.0,
            floor=_finite(c.critical_floor),
            floor_passed=None if c.critical_floor is None else not c.floor_failed,
            kind=c.kind,
        )
        for c in graded.criteria
        if _finite(c.norm) is not None
    }


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
