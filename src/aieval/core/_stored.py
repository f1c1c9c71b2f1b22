"""The one adapter from what earlier versions stored to typed verdicts and scores.

Before verdicts were stored, a sample kept its pass flag in ``passed``, a workflow sample its
evaluation in ``extra["evaluation"]``, and a judge score whose verdict could not be read the
reason in ``metadata["unreadable"]``. :func:`adapt_record` turns such a record into the current
shape (a ``verdict`` and ``ScoreRecord.unreadable``), keeping the stored pass flag, so reports
and comparisons give the numbers they gave then.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aieval._numbers import finite
from aieval.core._grader import DEFAULT_PASS_THRESHOLD
from aieval.core._records import SampleRecord
from aieval.core._threshold import scorer_reasons, threshold_verdict
from aieval.core._verdict import GateOutcome, Reason, Verdict, criteria_of

__all__ = [
    "LEGACY_EVALUATION",
    "LEGACY_UNREADABLE",
    "adapt_record",
    "config_threshold",
    "evaluation_verdict",
]

#: The ``extra`` key where earlier versions stored a workflow sample's evaluation.
LEGACY_EVALUATION = "evaluation"
#: The score metadata key where earlier versions stored why a judge verdict was unreadable.
LEGACY_UNREADABLE = "unreadable"


def adapt_record(record: SampleRecord, pass_threshold: float) -> SampleRecord:
    """Give a record read from an earlier version's store its typed parts, in place.

    Its scores' ``metadata["unreadable"]`` moves to ``unreadable``; without a stored verdict,
    one is derived from the stored pass flag, the scores and ``extra["evaluation"]``, which
    then moves into the verdict's ``workflow``.
    """
    for score in record.scores.values():
        if LEGACY_UNREADABLE in score.metadata:
            reason = score.metadata.pop(LEGACY_UNREADABLE)
            if score.unreadable is None and isinstance(reason, str) and reason:
                score.unreadable = reason
    if record.verdict is None:
        record.verdict = _derived_verdict(record, pass_threshold)
        record.extra.pop(LEGACY_EVALUATION, None)
    return record


def _derived_verdict(record: SampleRecord, pass_threshold: float) -> Verdict:
    """The verdict of a record stored without one: its stored pass flag, with the numbers and
    reasons of its ``extra["evaluation"]`` (a workflow sample) or of the threshold grader."""
    evaluation = record.extra.get(LEGACY_EVALUATION)
    passed = bool(record.passed)
    if isinstance(evaluation, Mapping):
        return evaluation_verdict(evaluation, record, passed)
    return threshold_verdict(record, pass_threshold, passed=passed)


def config_threshold(config: Any) -> float:
    """A stored run config's ``pass_threshold`` (:data:`DEFAULT_PASS_THRESHOLD` when it has
    none, as runs then used)."""
    value = finite(config.get("pass_threshold")) if isinstance(config, Mapping) else None
    return DEFAULT_PASS_THRESHOLD if value is None else value


def evaluation_verdict(
    evaluation: Mapping[str, Any], record: SampleRecord, passed: bool, grader: str = "workflow"
) -> Verdict:
    """The verdict of a workflow evaluation in its stored form (``WorkflowEvaluation.to_dict``),
    for a row stored before verdicts (the workflow grader builds its verdicts from the typed
    evaluation instead).

    The evaluation itself is kept as the verdict's ``workflow``.
    """
    explained = {
        str(g["name"]): None if g.get("reason") is None else str(g["reason"])
        for g in evaluation.get("gate_results") or ()
        if isinstance(g, Mapping) and "name" in g
    }
    gates = tuple(
        GateOutcome(str(name), bool(ok), explained.get(str(name)))
        for name, ok in (evaluation.get("hard_gates") or {}).items()
    )
    reasons: tuple[Reason, ...] = ()
    if not passed:
        reasons = scorer_reasons(record) + _evaluation_reasons(evaluation)
    grade = evaluation.get("grade")
    return Verdict(
        passed=passed,
        reasons=reasons,
        weighted_score=finite(evaluation.get("weighted_score")),
        grade=None if grade is None else str(grade),
        gates=gates,
        criteria=criteria_of(evaluation.get("criteria")),
        grader=grader,
        workflow=dict(evaluation),
    )


def _evaluation_reasons(evaluation: Mapping[str, Any]) -> tuple[Reason, ...]:
    found = [
        Reason("gate", str(g.get("name")), str(g.get("reason") or "failed"))
        for g in evaluation.get("gate_failures") or ()
        if isinstance(g, Mapping)
    ]
    found += [
        # the score itself stays out of the text so that misses of one floor group
        Reason("floor", str(f.get("criterion")), f"below its critical floor {f.get('floor')}")
        for f in evaluation.get("floor_violations") or ()
        if isinstance(f, Mapping)
    ]
    if evaluation.get("reason") == "below_threshold":
        limit = evaluation.get("pass_threshold")
        found.append(Reason("threshold", "weighted_score", f"weighted score below {limit}"))
    return tuple(found)
