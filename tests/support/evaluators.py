"""A small third-party-style evaluator for the runner's plugin seam."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aieval import Example
from aieval.core import GradeInput, GraderRequest, Verdict
from aieval.runner._evaluator import EvaluatorRequest
from aieval.runner._result import Aggregator
from aieval.runner._target import RecordedTarget, Target


class Shouted:
    """Passes a sample when its output is upper case (grade A, else F)."""

    name = "shout"

    def grade(self, sample: GradeInput) -> Verdict:
        text = sample.record.prediction
        shouted = bool(text) and text == text.upper()
        return Verdict(shouted, grade="A" if shouted else "F", grader=self.name)


class ShoutGrader:
    """Passes a sample when its output is upper case; counts the shouted ones per run."""

    def __init__(self, request: EvaluatorRequest) -> None:
        self.request = request

    def describe(self) -> dict[str, Any]:
        return {"id": "shout", "profile": self.request.profile}

    def rows(self, dataset: Any) -> Any:
        return dataset

    def check(self, examples: Iterable[Example]) -> None:
        for example in examples:
            if example.prediction is None:
                raise ValueError(f"row {example.id} has nothing to grade")

    def wrap(self, target: Target | None) -> Target:
        return target if target is not None else RecordedTarget()

    def grader(self, request: GraderRequest) -> Shouted:
        return Shouted()

    def aggregator(self, scorer_names: list[str]) -> Aggregator:
        return Aggregator(scorer_names)


def factory(request: EvaluatorRequest) -> ShoutGrader:
    """The entry point's target: ``shout = "tests.support.evaluators:factory"``."""
    return ShoutGrader(request)


class OldShoutGrader(ShoutGrader):
    """An evaluator written before graders: it grades through ``sample_extra``."""

    def sample_extra(self, example: Example, output: Any, scores: Any) -> dict[str, Any]:
        return {"evaluation": {"passed": True}}


def old_factory(request: EvaluatorRequest) -> OldShoutGrader:
    return OldShoutGrader(request)
