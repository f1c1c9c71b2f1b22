"""``load_runs``: a folder of recorded run logs as workflow runs (trace data is refused here:
:mod:`aieval.traces` reads it, building on this package)."""

from __future__ import annotations

from pathlib import Path

from aieval._tracefiles import is_trace_data
from aieval.errors import WorkflowError
from aieval.workflows import _model
from aieval.workflows._model import WorkflowRun

__all__ = ["load_runs"]


def load_runs(folder: str | Path) -> list[WorkflowRun]:
    """Read every ``*.json`` run log of a folder, sorted by file name.

    Raises:
        WorkflowError: an unreadable folder or file, or a bad field (names file and field);
            OpenTelemetry trace data (read it with :func:`aieval.traces.load_traces`).
    """
    if is_trace_data(folder):
        raise WorkflowError(
            f"{folder}: OpenTelemetry trace data, not run logs: read it with "
            "aieval.traces.load_traces (one run per trace)"
        )
    return _model.load_runs(folder)
