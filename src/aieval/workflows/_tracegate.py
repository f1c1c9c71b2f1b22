"""The ``trace_complete`` gate of runs read from OpenTelemetry traces.

A run made from a trace carries ``metadata.trace.missing``: what the trace lacks (a parent
that never arrived, no root, open spans, a cut export). Any of it fails the gate, so an
incomplete trace is never graded as if it were whole; runs not made from traces have no such
gate.
"""

from __future__ import annotations

from collections.abc import Mapping

from aieval.grading import GateResult
from aieval.workflows._model import WorkflowRun

__all__ = ["trace_complete"]


def trace_complete(run: WorkflowRun) -> GateResult | None:
    """The gate's verdict for a run read from a trace; ``None`` for any other run."""
    trace = run.metadata.get("trace")
    if not isinstance(trace, Mapping):
        return None
    missing = trace.get("missing")
    if not isinstance(missing, list):
        return GateResult(
            "trace_complete", False, "metadata.trace.missing is not a list: cannot tell"
        )
    if missing:
        return GateResult(
            "trace_complete",
            False,
            f"trace {trace.get('trace_id', run.workflow_id)} is incomplete: "
            + "; ".join(map(str, missing)),
            {"missing": list(missing)},
        )
    return GateResult(
        "trace_complete", True, f"all {trace.get('spans', '?')} spans arrived, closed"
    )
