"""Online scoring: the checks, scorers and judges of an eval run continuously on a sample of
the traces a server receives, within a hard budget, each matched trace ending scored or with
one typed skip reason; results kept per window as runs, alerts on a sustained drop
(docs/online.md)."""

from aieval.online._budget import BUDGET_PURPOSE, BudgetGate, budget_for, hit_budget, spending
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

__all__ = [
    "BUDGET_PURPOSE",
    "SKIP_REASONS",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AttributeMatch",
    "Budget",
    "BudgetGate",
    "OnlineRule",
    "RuleScoring",
    "SkipReason",
    "TraceFilter",
    "WindowKind",
    "WorkState",
    "budget_for",
    "hit_budget",
    "sample_point",
    "sampled",
    "spending",
    "window_end",
    "window_run_name",
    "window_start",
]
