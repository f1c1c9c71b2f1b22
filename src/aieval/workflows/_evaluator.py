"""The ``workflow`` evaluator plugin: workflow grading as the runner's per-sample evaluator."""

from __future__ import annotations

from aieval.runner import EvaluatorRequest
from aieval.workflows._runner import WorkflowMode

__all__ = ["factory"]


def factory(request: EvaluatorRequest) -> WorkflowMode:
    """Grade each sample's workflow run against the request's definition and profile."""
    return WorkflowMode(
        request.workflow, request.profile, enforce_hard_gates=request.enforce_hard_gates
    )
