"""``load_runs``: recorded run logs, or OpenTelemetry trace data, as workflow runs."""

from __future__ import annotations

from pathlib import Path

from aieval._tracefiles import is_trace_data
from aieval.workflows import _model
from aieval.workflows._model import WorkflowRun

__all__ = ["load_runs"]


def load_runs(folder: str | Path) -> list[WorkflowRun]:
    """Read every ``*.json`` run log of a folder, sorted by file name; OpenTelemetry trace data
    (an OTLP file, or a folder of them) gives one run per trace (see :mod:`aieval.traces`).

    Raises:
        WorkflowError: an unreadable folder or file, or a bad field (names file and field).
    """
    if is_trace_data(folder):
        # imported here: the trace reader builds on this package's run model
        from aieval.traces._read import load_traces

        return load_traces(folder)
    return _model.load_runs(folder)
