"""Which grader decides a run's verdicts: the one named, the evaluator's own, or the
threshold grader."""

from __future__ import annotations

from aieval.core import Grader, GraderRequest, ThresholdGrader, load_grader
from aieval.runner._evaluator import SampleEvaluator

__all__ = ["run_grader"]


def run_grader(
    name: str | None, pass_threshold: float, evaluator: SampleEvaluator | None
) -> Grader:
    """The run's grader: the ``aieval.graders`` plugin ``name``; else the evaluator's
    ``grader(request)``; else the threshold grader."""
    request = GraderRequest(pass_threshold=pass_threshold)
    if name is not None:
        return load_grader(name, request)
    if evaluator is not None:
        return evaluator.grader(request)
    return ThresholdGrader(pass_threshold)
