"""Online scoring in tests: received traces put in a store, and rules written to its
``online_rules`` table as the rules' own loader writes them (the JSON of an OnlineRule)."""

from __future__ import annotations

import json
import time

from tests.traces._definition import DEFINITION

from aieval import Store
from aieval.online import OnlineRule, RuleScoring, rule_to_json
from aieval.store import ReceivedTraces

__all__ = ["T0", "add_trace", "put_rule", "scored_rule", "trace_body", "trace_ids"]

#: An hour's start (UTC): traces in tests arrive in the hour after it.
T0 = 1_800_000_000.0 - 1_800_000_000.0 % 3600


def trace_ids(n: int, start: int = 0) -> list[str]:
    """``n`` distinct trace ids (32 hex digits)."""
    return [f"{i + 1:032x}" for i in range(start, start + n)]


def trace_body(trace_id: str, *, service: str = "shop", complete: bool = True) -> bytes:
    """An OTLP/JSON export request holding one trace of two spans (of its child span only,
    whose parent never arrived, when not ``complete``)."""
    spans = [
        {"traceId": trace_id, "spanId": "1" * 16, "name": "app", "startTimeUnixNano": "1000",
         "endTimeUnixNano": "2000"},
        {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16,
         "name": "execute_tool get_order", "startTimeUnixNano": "1100",
         "endTimeUnixNano": "1900", "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
             {"key": "gen_ai.tool.name", "value": {"stringValue": "get_order"}}]},
    ]  # fmt: skip
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    kept = spans if complete else spans[1:]
    request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": kept}]}]}
    return json.dumps(request).encode()


def add_trace(
    store: Store, trace_id: str, received: float, *, service: str = "shop", complete: bool = True
) -> None:
    """Keep one trace's export request in ``store`` as a server receives it."""
    body = trace_body(trace_id, service=service, complete=complete)
    ReceivedTraces(store.location).add(body, "json", {trace_id: 2 if complete else 1}, received)


def scored_rule(name: str = "support", **given: object) -> OnlineRule:
    """A rule grading the support app's traces with its workflow definition."""
    fields: dict[str, object] = {"scoring": RuleScoring(workflow=DEFINITION), **given}
    return OnlineRule(name, **fields)  # type: ignore[arg-type]


def put_rule(store: Store, rule: OnlineRule, *, paused: bool = False) -> None:
    """Write ``rule`` to the store's rules (its spec as ``aieval serve --online`` stores it)."""
    now = time.time()
    store._write(
        "INSERT INTO online_rules (name, spec, source, paused, created_at, updated_at)"
        " VALUES (?, ?, 'file', ?, ?, ?) ON CONFLICT (name) DO UPDATE SET spec = excluded.spec,"
        " paused = excluded.paused, updated_at = excluded.updated_at",
        (rule.name, rule_to_json(rule), int(paused), now, now),
    )
