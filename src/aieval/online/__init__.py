"""Online scoring: the checks, scorers and judges of an eval run continuously on a sample of
the traces a server receives, within a hard budget, each matched trace ending scored or with
one typed skip reason; results kept per window as runs, alerts on a sustained drop
(docs/online.md)."""

from aieval.online._model import (
    SKIP_REASONS,
    WINDOWS,
    WORK_STATES,
    AlertPolicy,
    AttributeMatch,
    Budget,
    OnlineRule,
    RuleScoring,
    SkipReason,
    TraceFilter,
    WindowKind,
    WorkState,
    sample_point,
    sampled,
    window_end,
    window_run_name,
    window_start,
)
from aieval.online._service import OnlineService
from aieval.online._worker import OnlineWorker

__all__ = [
    "SKIP_REASONS",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AttributeMatch",
    "Budget",
    "OnlineRule",
    "OnlineService",
    "OnlineWorker",
    "RuleScoring",
    "SkipReason",
    "TraceFilter",
    "WindowKind",
    "WorkState",
    "sample_point",
    "sampled",
    "window_end",
    "window_run_name",
    "window_start",
]
