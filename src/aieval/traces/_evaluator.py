"""The ``traces`` evaluator plug-in: OpenTelemetry traces graded as workflow runs.

A dataset that is trace data (an OTLP file, or a folder of them) selects it; the server's
grading of received traces names it. It reads each trace as one workflow run and grades it
exactly as the ``workflow`` evaluator grades a recorded run (the same definition, profile,
gates and grader): this package builds on workflows, never the reverse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aieval._tracefiles import is_trace_data
from aieval.runner import EvaluatorRequest
from aieval.traces._read import iter_trace_runs
from aieval.workflows import WorkflowMode

__all__ = ["TraceEvaluator", "factory", "trace_rows"]


class TraceEvaluator(WorkflowMode):
    """Workflow grading whose dataset may be trace data: one row per trace."""

    @staticmethod
    def rows(dataset: Any) -> Any:
        """Trace data becomes one row per trace; anything else reads as the ``workflow``
        evaluator reads it (a folder of run logs, rows already holding runs)."""
        if is_trace_data(dataset):
            return trace_rows(dataset)
        return WorkflowMode.rows(dataset)


def trace_rows(dataset: str | Path) -> list[dict[str, Any]]:
    """One row per trace: its id the trace id, its run as recorded-run JSON."""
    return [
        {"id": run.workflow_id, "input": run.inputs or {}, "run": run.to_dict()}
        for run in iter_trace_runs(dataset)
    ]


def factory(request: EvaluatorRequest) -> TraceEvaluator:
    """Grade each trace's run against the request's definition and profile."""
    return TraceEvaluator(
        request.workflow, request.profile, enforce_hard_gates=request.enforce_hard_gates
    )
