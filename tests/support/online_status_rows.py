"""Rows of the online scoring tables for the status tests, written straight to the store
against the schema (``aieval.store._schema``): the rules, the work items in each state, the
spend and the window runs, as the engine, the budget and the windows would leave them."""

from __future__ import annotations

import json
from typing import Any

from aieval.online import (
    OnlineRule,
    RuleScoring,
    WindowKind,
    rule_to_json,
    window_end,
    window_run_name,
)
from aieval.store import Store

__all__ = ["add_rule", "add_spend", "add_window_run", "add_work"]


def add_rule(
    store: Store,
    name: str,
    spec: dict[str, Any] | None = None,
    *,
    source: str = "file",
    paused: bool = False,
    at: float = 0.0,
) -> None:
    """Store the rule ``name``: its spec is a stored rule scoring ``exact_match`` with the
    fields of ``spec`` (e.g. ``window``, ``budget``) over it, as :func:`rule_to_json` writes
    one."""
    base = json.loads(rule_to_json(OnlineRule(name, scoring=RuleScoring(("exact_match",)))))
    base.update(spec or {})
    store._write(
        "INSERT INTO online_rules (name, spec, source, paused, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (name, json.dumps(base), source, int(paused), at, at),
    )


def add_work(
    store: Store,
    rule: str,
    trace_id: str,
    *,
    window_start: float,
    state: str,
    reason: str | None = None,
    message: str | None = None,
    matched_at: float = 0.0,
    not_before: float = 0.0,
    claimed_until: float | None = None,
    finished_at: float | None = None,
    run_id: str | None = None,
) -> None:
    """Store one work item of ``rule`` (a matched trace) in ``state``."""
    store._write(
        "INSERT INTO online_work (rule, trace_id, window_start, state, reason, message,"
        " claimed_by, claimed_until, not_before, attempts, matched_at, finished_at, run_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
        (
            rule,
            trace_id,
            window_start,
            state,
            reason,
            message,
            "server-a" if state == "claimed" else None,
            claimed_until,
            not_before,
            matched_at,
            finished_at,
            run_id,
        ),
    )


def add_spend(
    store: Store,
    rule: str,
    period: str,
    period_start: float,
    *,
    calls: int,
    tokens: int = 0,
    cost: float = 0.0,
    in_flight: int = 0,
) -> None:
    """Store ``rule``'s spend in one period."""
    store._write(
        "INSERT INTO online_spend (rule, period, period_start, calls, tokens, cost, in_flight)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (rule, period, period_start, calls, tokens, cost, in_flight),
    )


def add_window_run(
    store: Store, rule: str, start: float, kind: WindowKind, *, passed: int, failed: int
) -> str:
    """Store ``rule``'s window run (named as the engine names it) holding ``passed`` passing
    and ``failed`` failing samples, and its ``online_windows`` row; the run id."""
    from aieval._records import SampleRecord, ScoreRecord
    from aieval.core._threshold import threshold_verdict

    run_id = store.create_run(
        name=window_run_name(rule, start, kind),
        n_examples=passed + failed,
        config={"scorers": [{"name": "exact_match", "options": {}}], "pass_threshold": 0.5},
    )
    records = []
    for i in range(passed + failed):
        record = SampleRecord(
            id=f"t{i:04d}",
            index=i,
            input=f"trace {i}",
            expected="yes",
            prediction="yes" if i < passed else "no",
            scores={"exact_match": ScoreRecord(1.0 if i < passed else 0.0)},
        )
        record.verdict = threshold_verdict(record, 0.5)
        record.passed = record.verdict.passed
        records.append(record)
    store.record_samples(run_id, records)
    store.finish_run(run_id, status="completed")
    store._write(
        "INSERT INTO online_windows (rule, window_start, window_end, run_id, closed)"
        " VALUES (?, ?, ?, ?, 0)",
        (rule, start, window_end(start, kind), run_id),
    )
    return run_id
