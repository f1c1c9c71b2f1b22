"""Which grader decides a run's verdicts: the one named, the evaluator's own, or the
threshold grader."""

from __future__ import annotations

from collections.abc import Mapping

from aieval.core import GradeInput, Grader, GraderRequest, ThresholdGrader, Verdict, load_grader
from aieval.core._stored import LEGACY_EVALUATION, evaluation_verdict
from aieval.errors import ConfigError
from aieval.runner._evaluator import SampleEvaluator

__all__ = ["run_grader"]


def run_grader(
    name: str | None, pass_threshold: float, evaluator: SampleEvaluator | None
) -> Grader:
    """The run's grader: the ``aieval.graders`` plugin ``name``; else the evaluator's
    ``grader(request)``; else, for an evaluator that stores ``extra["evaluation"]`` itself
    (written before graders existed), its payload read into a verdict; else the threshold
    grader."""
    request = GraderRequest(pass_threshold=pass_threshold)
    if name is not None:
        return load_grader(name, request)
    if evaluator is not None:
        own = getattr(evaluator, "grader", None)
        return own(request) if callable(own) else _EvaluationPayload()
    return ThresholdGrader(pass_threshold)


class _EvaluationPayload:
    """The verdict of an evaluator that puts its evaluation in ``extra["evaluation"]``."""

    name = "evaluator"

    def grade(self, sample: GradeInput) -> Verdict:
        evaluation = sample.record.extra.pop(LEGACY_EVALUATION, None)
        if not isinstance(evaluation, Mapping) or "passed" not in evaluation:
            raise ConfigError("the run's evaluator stored no evaluation.passed for this sample")
        passed = bool(evaluation["passed"])
        return evaluation_verdict(evaluation, sample.record, passed, grader=self.name)
