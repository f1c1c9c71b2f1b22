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
from aieval.online._status import (
    HISTORY_S,
    STALL_AFTER_S,
    ErrorCount,
    OnlineStatus,
    RuleStatus,
    SpendStatus,
    WindowStatus,
    WorkCounts,
    online_status,
)

__all__ = [
    "HISTORY_S",
    "SKIP_REASONS",
    "STALL_AFTER_S",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AttributeMatch",
    "Budget",
    "ErrorCount",
    "OnlineRule",
    "OnlineStatus",
    "RuleScoring",
    "RuleStatus",
    "SkipReason",
    "SpendStatus",
    "TraceFilter",
    "WindowKind",
    "WindowStatus",
    "WorkCounts",
    "WorkState",
    "online_status",
    "sample_point",
    "sampled",
    "window_end",
    "window_run_name",
    "window_start",
]
