"""One run of the OpenAI Agents SDK (triage hands off to billing, which calls a tool), traced
by OpenInference's Agents SDK instrumentation through the OTLP exporter, graded as a run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.openai_server import Behaviour, OpenAIServer, Reply
from tests.traces._definition import DEFINITION, SCORES
from tests.traces._produce import _tool_calls
from tests.traces._receiver import OtlpReceiver

from aieval.traces import TraceReading, iter_trace_runs
from aieval.workflows import evaluate_run, load_workflow

APP = Path(__file__).with_name("_agents_sdk_app.py")


def respond(body: Any) -> Behaviour:
    messages = body["messages"]
    if "[triage]" in str(messages[0].get("content")):
        return _tool_calls([("transfer_to_billing", {})])
    if not any(m.get("role") == "tool" and "paid" in str(m.get("content")) for m in messages):
        return _tool_calls([("get_order", {"order_id": "A1042"})])
    return Reply("Your refund for order A1042 is on its way.", usage=(40, 10), model="m")


def test_an_agents_sdk_run_is_graded_from_its_trace(tmp_path: Path) -> None:
    with OpenAIServer() as chat, OtlpReceiver(tmp_path) as receiver:
        chat.responder = respond
        done = subprocess.run(
            [sys.executable, str(APP), chat.base_url, receiver.endpoint],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    reading = TraceReading()
    [run] = list(iter_trace_runs(receiver.json_file, reading))
    assert run.workflow_id == done.stdout.strip()
    assert [(s.name, s.agent_role) for s in run.steps] == [
        ("triage", "triage"),
        ("billing", "billing"),
    ]
    triage, billing = run.steps
    assert triage.metadata["handoffs"] == ["billing"] and "tool_calls" not in triage.metadata
    [call] = billing.metadata["tool_calls"]
    assert (call["name"], call["executed"]) == ("get_order", True)
    assert run.tokens == 50 + 12 + 50 + 12 + 40 + 10
    assert run.outputs == {"output": "Your refund for order A1042 is on its way."}
    assert reading.incomplete == {} and reading.unmapped == {}
    definition = dict(DEFINITION, steps=DEFINITION["steps"][:2], outputs={})
    ev = evaluate_run(run, workflow=load_workflow(definition), scores=SCORES)
    assert ev.passed and not ev.gate_failures, ev.reasons
    assert ev.hard_gates["handoff_graph_respected"] and ev.hard_gates["trace_complete"]
