"""What the engine counts as scored on a real store (both backends): a scorer that could not
score (a judge whose endpoint answers 500) skips the trace as ``error`` naming the scorer, with
no sample stored, and a backfill puts it back."""

from __future__ import annotations

import json
from collections import Counter

from tests.support.online import T0, add_trace, put_rule, trace_ids
from tests.support.openai_server import OpenAIServer, Reply, Status

from aieval import Store
from aieval.online import OnlineRule, RuleScoring
from aieval.online._worker import OnlineWorker
from aieval.store import ReceivedTraces, window_run_id


def _judge_rule(server: OpenAIServer) -> OnlineRule:
    options = {"rubric": "Reward correct answers.", "provider": "openai-compatible",
               "base_url": server.base_url, "model": "judge-m", "name": "quality"}  # fmt: skip
    judge = {"llm_judge": options}
    return OnlineRule("judged", scoring=RuleScoring(scorers=(judge,)), settle_s=0)


def test_a_judge_outage_is_an_error_not_a_failed_sample(
    store_location: str, openai_server: OpenAIServer
) -> None:
    store = Store(store_location)
    rule = _judge_rule(openai_server)
    put_rule(store, rule)
    [trace_id] = trace_ids(1)
    add_trace(store, trace_id, T0 + 1)
    openai_server.responder = lambda _body: Status(500, {"error": {"message": "down"}})
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    assert worker.work_once(T0 + 3) == 1
    [work] = store.online_work(rule.name)
    assert (work.state, work.reason) == ("skipped", "error")
    assert "scorer 'quality'" in (work.message or "") and "500" in (work.message or "")
    run_id = window_run_id(rule.name, T0)
    assert list(store.iter_samples(run_id)) == []  # no failed sample for the pass rate
    # the judge is back: a backfill puts the trace back and it is scored
    openai_server.responder = lambda _body: Reply('{"score": 9, "reason": "fine"}')
    assert worker.backfill(rule.name, T0, T0 + 3600, now=T0 + 4) == 1
    worker.work_once(T0 + 5)
    assert Counter(w.state for w in store.online_work(rule.name)) == {"scored": 1}
    [sample] = store.iter_samples(run_id)
    assert sample.id == trace_id and sample.scores["quality"].value == 0.9
    store.close()
    worker.close()


def _answer(store: Store, trace_id: str, output: str) -> None:
    """One whole trace whose root span's output is ``output``."""
    root = {"traceId": trace_id, "spanId": "1" * 16, "name": "app",
            "startTimeUnixNano": "1000", "endTimeUnixNano": "2000", "attributes": [
                {"key": "input.value", "value": {"stringValue": "give me JSON"}},
                {"key": "output.value", "value": {"stringValue": output}}]}  # fmt: skip
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [root]}]}]}
    ReceivedTraces(store.location).add(json.dumps(body).encode(), "json", {trace_id: 1}, T0 + 1)


def test_checks_without_a_workflow_score_the_traces_output_text(store_location: str) -> None:
    store = Store(store_location)
    rule = OnlineRule("json", scoring=RuleScoring(default_checks=("json_valid",)), settle_s=0)
    put_rule(store, rule)
    [prose, data] = trace_ids(2)
    _answer(store, prose, "not json")
    _answer(store, data, '{"a":1}')
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    worker.work_once(T0 + 3)
    assert Counter(w.state for w in store.online_work(rule.name)) == {"scored": 2}
    samples = {s.id: s for s in store.iter_samples(window_run_id(rule.name, T0))}
    assert samples[prose].scores["json_valid"].value == 0.0
    assert samples[data].scores["json_valid"].value == 1.0
    assert (samples[prose].passed, samples[data].passed) == (False, True)
    assert samples[prose].prediction == "not json" and samples[prose].input == "give me JSON"
    assert "missing_criteria" not in json.dumps(samples[prose].metadata)  # no workflow grader
    worker.close()
    store.close()


def test_a_rule_without_a_budget_still_records_its_spend(
    store_location: str, openai_server: OpenAIServer
) -> None:
    store = Store(store_location)
    rule = _judge_rule(openai_server)
    assert rule.budget.unlimited
    put_rule(store, rule)
    for trace_id in trace_ids(2):
        add_trace(store, trace_id, T0 + 1)
    openai_server.responder = lambda _body: Reply('{"score": 9, "reason": "r"}', usage=(40, 10))
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    worker.work_once(T0 + 3)
    assert Counter(w.state for w in store.online_work(rule.name)) == {"scored": 2}
    spend = {row.period: row for row in store.online_spend(rule.name)}
    assert set(spend) == {"hour", "day"}
    assert all((r.calls, r.tokens, r.in_flight) == (2, 100, 0) for r in spend.values())
    worker.close()
    store.close()
