"""Online scoring: the checks, scorers and judges of an eval run continuously on a sample of
the traces a server receives, within a hard budget, each matched trace ending scored or with
one typed skip reason; results kept per window as runs, alerts on a sustained drop
(docs/online.md)."""

from aieval.online._filter import rule_matches, trace_matches
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
from aieval.online._rule_store import active_rules, install_file_rules, rule_of, stored_rules
from aieval.online._rules import (
    RuleOrigin,
    load_rules,
    parse_rule,
    parse_rules,
    rule_from_json,
    rule_to_json,
)

__all__ = [
    "SKIP_REASONS",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AttributeMatch",
    "Budget",
    "OnlineRule",
    "RuleOrigin",
    "RuleScoring",
    "SkipReason",
    "TraceFilter",
    "WindowKind",
    "WorkState",
    "active_rules",
    "install_file_rules",
    "load_rules",
    "parse_rule",
    "parse_rules",
    "rule_from_json",
    "rule_matches",
    "rule_of",
    "rule_to_json",
    "sample_point",
    "sampled",
    "stored_rules",
    "trace_matches",
    "window_end",
    "window_run_name",
    "window_start",
]
