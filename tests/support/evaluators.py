"""A small third-party-style evaluator for the runner's plugin seam."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aieval import Example, ScoreRecord
from aieval.runner._evaluator import EvaluatorRequest
from aieval.runner._result import Aggregator
from aieval.runner._target import Output, RecordedTarget, Target


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

    def sample_extra(
        self, example: Example, output: Output, scores: Mapping[str, ScoreRecord]
    ) -> dict[str, Any]:
        shouted = bool(output.text) and output.text == output.text.upper()
        return {"evaluation": {"passed": shouted, "grade": "A" if shouted else "F"}}

    def aggregator(self, scorer_names: list[str]) -> Aggregator:
        return Aggregator(scorer_names)


def factory(request: EvaluatorRequest) -> ShoutGrader:
    """The entry point's target: ``shout = "tests.support.evaluators:factory"``."""
    return ShoutGrader(request)
