"""Workflow runs: the run model, definitions, gates from runs, grading and per-agent roll-ups.

Example:
    >>> from aieval.workflows import evaluate_run
    >>> ev = evaluate_run({"workflow_id": "r1", "overall_status": "failed",
    ...                    "final_output": None}, profile="B")
    >>> ev.grade, ev.passed, ev.hard_gates["overall_status_success"]
    ('F', False, False)
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports
from aieval.workflows._definition import (
    EvaluationSpec,
    InputSpec,
    OutputSpec,
    StepSpec,
    WorkflowDefinition,
    load_workflow,
)
from aieval.workflows._efficiency import efficiency, percentile, run_metrics
from aieval.workflows._evaluate import DEFAULT_PROFILE, WorkflowEvaluation, evaluate_run
from aieval.workflows._gates import (
    agent_path,
    calls_by_agent,
    check_compatible,
    run_gates,
    tool_calls,
    trajectory_calls,
    unresolved_outputs,
)
from aieval.workflows._model import (
    STEP_STATUSES,
    StepResult,
    StepStatus,
    WorkflowRun,
    load_run,
)
from aieval.workflows._model_calls import token_total, unpriced
from aieval.workflows._recorder import StepHandle, recording, step
from aieval.workflows._rollup import agent_rollup, step_scores
from aieval.workflows._runs import load_runs

if TYPE_CHECKING:
    from aieval.workflows._runner import WorkflowMode

__all__ = [
    "DEFAULT_PROFILE",
    "STEP_STATUSES",
    "EvaluationSpec",
    "InputSpec",
    "OutputSpec",
    "StepHandle",
    "StepResult",
    "StepSpec",
    "StepStatus",
    "WorkflowDefinition",
    "WorkflowEvaluation",
    "WorkflowMode",
    "WorkflowRun",
    "agent_path",
    "agent_rollup",
    "calls_by_agent",
    "check_compatible",
    "efficiency",
    "evaluate_run",
    "load_run",
    "load_runs",
    "load_workflow",
    "percentile",
    "recording",
    "run_gates",
    "run_metrics",
    "step",
    "step_scores",
    "token_total",
    "tool_calls",
    "trajectory_calls",
    "unpriced",
    "unresolved_outputs",
]

# The workflow evaluator (what the ``workflow`` plug-in builds, and the ``traces`` one extends)
# loads the runner: imported on first use, so reading and grading runs stays light.
__getattr__, __dir__ = lazy_exports(
    __name__, {"WorkflowMode": "aieval.workflows._runner"}, globals()
)
