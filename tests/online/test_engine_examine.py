"""When the engine examines a trace, on a real store (both backends): once it has settled for
each rule (that rule's own ``settle_s``), again when spans arrive after (a late root may make a
rule match now), a trace whose spans keep coming once ``incomplete_after_s`` passed since its
first; and a cycle's queries are answered by indexes, never by reading every stored trace."""

from __future__ import annotations

import json
from collections import Counter

from tests.support.online import T0, add_trace, put_rule, scored_rule, trace_ids

from aieval import Store
from aieval.online import TraceFilter, online_status
from aieval.online._worker import OnlineWorker
from aieval.store import ReceivedTraces
from aieval.store._online_work import TAKE_IN_BOUND, TAKE_IN_TRACES

ROOT = {"spanId": "1" * 16, "name": "app", "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000"}  # fmt: skip
CHILD = {"spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "execute_tool get_order",
         "startTimeUnixNano": "1100", "endTimeUnixNano": "1900"}  # fmt: skip


def _send(store: Store, trace_id: str, span: dict[str, str], received: float) -> None:
    """One export request holding ``span`` of ``trace_id``, arrived at ``received``."""
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}
    spans = [{**span, "traceId": trace_id}]
    body = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}
    ReceivedTraces(store.location).add(json.dumps(body).encode(), "json", {trace_id: 1}, received)


def _rows(store: Store) -> Counter[tuple[str, str]]:
    return Counter((w.rule, w.reason or w.state) for w in store.online_work())


def test_a_root_arriving_after_the_examination_makes_the_rule_match(
    store_location: str,
) -> None:
    store = Store(store_location)
    put_rule(store, scored_rule("roots", filter=TraceFilter(span_name="app"), settle_s=1))
    [trace_id] = trace_ids(1)
    _send(store, trace_id, CHILD, T0 + 1)
    worker = OnlineWorker(store_location, "w")
    assert worker.examine(T0 + 3) == 1
    assert store.online_work() == []  # no root yet: not matched
    _send(store, trace_id, ROOT, T0 + 9)  # its root, 8 s later
    assert worker.examine(T0 + 9.5) == 0  # not settled again yet
    assert worker.examine(T0 + 11) == 1
    assert _rows(store) == {("roots", "pending"): 1}
    worker.work_once(T0 + 12)
    assert _rows(store) == {("roots", "scored"): 1}
    worker.close()
    store.close()


def test_each_rule_waits_only_for_its_own_settle_delay(store_location: str) -> None:
    store = Store(store_location)
    put_rule(store, scored_rule("slow", settle_s=86400, incomplete_after_s=90000))
    put_rule(store, scored_rule("quick", settle_s=1))
    [trace_id] = trace_ids(1)
    add_trace(store, trace_id, T0 + 1)
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 3)
    assert _rows(store) == {("quick", "pending"): 1}
    assert worker.examine(T0 + 100) == 0  # nothing due before the slow rule settles
    assert online_status(store, T0 + 100).unexamined == 0
    waiting = online_status(store, T0 + 1 + 86400 + 10)  # settled, its cycle not run yet
    assert (waiting.unexamined, waiting.unexamined_lag_s) == (1, 10)
    worker.examine(T0 + 1 + 86400)
    assert _rows(store) == {("quick", "pending"): 1, ("slow", "pending"): 1}
    worker.close()
    store.close()


def test_a_trace_whose_spans_keep_coming_is_counted(store_location: str) -> None:
    store = Store(store_location)
    put_rule(store, scored_rule(settle_s=5, incomplete_after_s=60))
    [trace_id] = trace_ids(1)
    worker = OnlineWorker(store_location, "w")
    for n in range(40):  # a span every 2 s, for 80 s: never settled for 5 s
        _send(store, trace_id, CHILD, T0 + 2 * n)
        worker.examine(T0 + 2 * n + 1)
        if n < 30:
            assert store.online_work() == []
    assert _rows(store) == {("support", "pending"): 1}  # counted once 60 s after its first
    worker.close()
    store.close()


def _plan(store: Store, sql: str, args: tuple[object, ...]) -> str:
    if store.location.backend == "sqlite":
        rows = store._read(f"EXPLAIN QUERY PLAN {sql}", args)
        return "\n".join(str(row[-1]) for row in rows)
    with store._lock:  # one connection: the setting holds for the EXPLAIN after it
        store._db.query("SELECT set_config('enable_seqscan', 'off', false)")
        rows = store._db.query(f"EXPLAIN {sql}", args)
        store._db.query("SELECT set_config('enable_seqscan', 'on', false)")
    return "\n".join(str(row[0]) for row in rows)


def test_a_cycle_reads_by_index_not_every_stored_trace(store_location: str) -> None:
    store = Store(store_location)
    for trace_id in trace_ids(20):
        add_trace(store, trace_id, T0 + 1)
    queries = [
        ("SELECT MAX(last_request) FROM online_traces", ()),
        (TAKE_IN_BOUND, (0, 50)),
        (TAKE_IN_TRACES, (0, 5)),
        ("SELECT trace_id FROM online_traces WHERE recheck_at <= ? ORDER BY recheck_at"
         " LIMIT ?", (T0, 50)),
    ]  # fmt: skip
    for sql, args in queries:
        plan = _plan(store, sql, args)
        assert "Seq Scan" not in plan, plan  # PostgreSQL
        scans = [line for line in plan.splitlines() if line.startswith("SCAN")]
        assert all(line.startswith("SCAN next_rows") for line in scans), plan  # SQLite
    store.close()


def test_an_incomplete_trace_whose_spans_keep_coming_ends_incomplete(
    store_location: str,
) -> None:
    store = Store(store_location)
    put_rule(store, scored_rule(settle_s=5, incomplete_after_s=20))
    [trace_id] = trace_ids(1)
    worker = OnlineWorker(store_location, "w")
    for n in range(25):  # a child span every 2 s, for 50 s; its root never comes
        _send(store, trace_id, CHILD, T0 + 2 * n)
        worker.examine(T0 + 2 * n + 1)
        worker.work_once(T0 + 2 * n + 1)
    [work] = store.online_work()
    assert (work.state, work.reason) == ("skipped", "incomplete")  # 40 s after its first
    assert work.finished_at is not None and work.finished_at <= T0 + 42
    worker.close()
    store.close()
