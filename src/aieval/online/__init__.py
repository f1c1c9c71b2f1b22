"""Online scoring: the checks, scorers and judges of an eval run continuously on a sample of
the traces a server receives, within a hard budget, each matched trace ending scored or with
one typed skip reason; results kept per window as runs, alerts on a sustained drop
(docs/online.md)."""

from aieval.online._budget import BUDGET_PURPOSE, BudgetGate, budget_for, hit_budget, spending
from aieval.online._alerts import MAX_ATTEMPTS, AlertSender, alert_payload, check_alerts
from aieval.online._incidents import Figure, Incident, IncidentKind, incidents, one_sided_p
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
    "BUDGET_PURPOSE",
    "HISTORY_S",
from aieval.online._review import send_to_review, unsure
from aieval.online._windows import CONFIDENCE, MeanScore, WindowSummary, window_summaries

__all__ = [
    "CONFIDENCE",
    "MAX_ATTEMPTS",
    "SKIP_REASONS",
    "STALL_AFTER_S",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AlertSender",
    "AttributeMatch",
    "Budget",
    "BudgetGate",
    "ErrorCount",
    "Figure",
    "Incident",
    "IncidentKind",
    "MeanScore",
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
    "budget_for",
    "hit_budget",
    "online_status",
    "sample_point",
    "sampled",
    "spending",
    "WindowSummary",
    "WorkState",
    "alert_payload",
    "check_alerts",
    "incidents",
    "one_sided_p",
    "sample_point",
    "sampled",
    "send_to_review",
    "unsure",
    "window_end",
    "window_run_name",
    "window_start",
    "window_summaries",
]
