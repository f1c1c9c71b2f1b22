"""Online scoring: the checks, scorers and judges of an eval run continuously on a sample of
the traces a server receives, within a hard budget, each matched trace ending scored or with
one typed skip reason; results kept per window as runs, alerts on a sustained drop
(docs/online.md)."""

from aieval.online._alerts import (
    FIRST_PAUSE_S,
    MAX_PAUSE_S,
    RETRY_FOR_S,
    AlertSender,
    alert_payload,
    check_alerts,
    retry_pause,
)
from aieval.online._budget import (
    BUDGET_PURPOSE,
    BudgetGate,
    budget_for,
    hit_budget,
    spending,
)
from aieval.online._filter import (
    rule_matches,
    trace_matches,
)
from aieval.online._incidents import (
    Figure,
    Incident,
    IncidentKind,
    incidents,
    one_sided_p,
)
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
from aieval.online._review import (
    send_to_review,
    unsure,
)
from aieval.online._rule_store import (
    active_rules,
    install_file_rules,
    rule_of,
    stored_rules,
)
from aieval.online._rules import (
    RuleOrigin,
    load_rules,
    parse_rule,
    parse_rules,
    rule_from_json,
    rule_to_json,
)
from aieval.online._service import (
    OnlineService,
)
from aieval.online._status import (
    FAILING_AFTER,
    HISTORY_S,
    STALL_AFTER_S,
    AlertStatus,
    ErrorCount,
    OnlineStatus,
    RuleStatus,
    SpendStatus,
    WindowStatus,
    WorkCounts,
    online_status,
)
from aieval.online._windows import (
    CONFIDENCE,
    MeanScore,
    WindowSummary,
    window_summaries,
)
from aieval.online._worker import (
    OnlineWorker,
)

__all__ = [
    "BUDGET_PURPOSE",
    "CONFIDENCE",
    "FAILING_AFTER",
    "FIRST_PAUSE_S",
    "HISTORY_S",
    "MAX_PAUSE_S",
    "RETRY_FOR_S",
    "SKIP_REASONS",
    "STALL_AFTER_S",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AlertSender",
    "AlertStatus",
    "AttributeMatch",
    "Budget",
    "BudgetGate",
    "ErrorCount",
    "Figure",
    "Incident",
    "IncidentKind",
    "MeanScore",
    "OnlineRule",
    "OnlineService",
    "OnlineStatus",
    "OnlineWorker",
    "RuleOrigin",
    "RuleScoring",
    "RuleStatus",
    "SkipReason",
    "SpendStatus",
    "TraceFilter",
    "WindowKind",
    "WindowStatus",
    "WindowSummary",
    "WorkCounts",
    "WorkState",
    "active_rules",
    "alert_payload",
    "budget_for",
    "check_alerts",
    "hit_budget",
    "incidents",
    "install_file_rules",
    "load_rules",
    "one_sided_p",
    "online_status",
    "parse_rule",
    "parse_rules",
    "retry_pause",
    "rule_from_json",
    "rule_matches",
    "rule_of",
    "rule_to_json",
    "sample_point",
    "sampled",
    "send_to_review",
    "spending",
    "stored_rules",
    "trace_matches",
    "unsure",
    "window_end",
    "window_run_name",
    "window_start",
    "window_summaries",
]
