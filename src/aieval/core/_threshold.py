"""The threshold grader of plain runs: the pass rule, the weighted score and the reasons."""

from __future__ import annotations

from collections.abc import Mapping

from aieval._floors import at_least
from aieval.core._grader import GradeInput, GraderRequest
from aieval.core._records import SampleRecord
from aieval.core._verdict import Reason, Verdict, finite

__all__ = ["ThresholdGrader", "factory", "scorer_reasons", "threshold_reasons", "ungraded_score"]


class ThresholdGrader:
    """A sample passes when its target did not fail, something was scored, and every score
    is valid (no error, no malformed judge verdict) and at least ``pass_threshold`` (n/a
    scores aside). Its weighted score is 100 x the mean of its scorer values (0 when the target
    failed, ``None`` when nothing was scored).
    """

    name = "threshold"

    def __init__(self, pass_threshold: float = 0.5) -> None:
        self.pass_threshold = pass_threshold

    def grade(self, sample: GradeInput) -> Verdict:
        """The verdict on one sample (see the class docstring)."""
        return threshold_verdict(sample.record, self.pass_threshold)


def factory(request: GraderRequest) -> ThresholdGrader:
    """The ``threshold`` entry point of the ``aieval.graders`` group."""
    return ThresholdGrader(request.pass_threshold)


def threshold_verdict(
    record: SampleRecord, threshold: float, passed: bool | None = None
) -> Verdict:
    """The threshold grader's verdict on ``record``; ``passed`` overrides the pass rule (a
    stored sample keeps the flag it was stored with)."""
    if passed is None:
        # a malformed judge verdict keeps its 0.0 (or tie) but never passes; a sample every
        # scorer found not applicable (unscored) has no score to pass with
        passed = (
            record.error is None
            and not record.unscored
            and all(
                s.error is None
                and s.malformed is None
                and (s.value is None or at_least(s.value, threshold))
                for s in record.scores.values()
            )
        )
    scores = {name: finite(s.value) for name, s in record.scores.items()}
    reasons: tuple[Reason, ...] = ()
    if not passed:
        reasons = scorer_reasons(record) + threshold_reasons(record.error, scores, threshold)
    return Verdict(
        passed=passed,
        reasons=reasons,
        weighted_score=ungraded_score(record.error, scores),
        grader="threshold",
    )


def scorer_reasons(record: SampleRecord) -> tuple[Reason, ...]:
    """The target's failure, then each scorer's failure, malformed verdict or judge reason."""
    found: list[Reason] = []
    if record.error:
        found.append(Reason("error", "target", record.error))
    for name, score in record.scores.items():
        if score.malformed:  # scored 0.0 (or, in older stores, an error)
            found.append(Reason("malformed", name, score.malformed))
        elif score.error:
            found.append(Reason("error", name, score.error))
        elif "parse_failures" in score.metadata and score.reason:
            found.append(Reason("judge", name, score.reason))
    return tuple(found)


def threshold_reasons(
    error: str | None, scores: Mapping[str, float | None], threshold: float
) -> tuple[Reason, ...]:
    """The scores below ``threshold`` (none when the target failed)."""
    if error:
        return ()
    return tuple(
        Reason("threshold", name, f"{name} below the pass threshold {threshold:g}")
        for name, value in scores.items()
        if value is not None and not at_least(value, threshold)
    )


def ungraded_score(error: str | None, scores: Mapping[str, float | None]) -> float | None:
    """0..100 mean of the scorer values (0 when the target failed; ``None`` if none scored)."""
    if error is not None:
        return 0.0
    values = [v for v in scores.values() if v is not None]
    return 100.0 * sum(values) / len(values) if values else None
