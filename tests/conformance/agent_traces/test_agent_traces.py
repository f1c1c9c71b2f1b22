"""Real traces of multi-agent programs (origins in ../README.md, ``make_traces.py`` here): the
handoff path is the order of the agents that held control, never the orchestrating run agent
nor an agent another one used as a tool."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.traces import TraceReading, iter_trace_runs
from aieval.workflows import WorkflowRun, agent_path, evaluate_run, load_workflow

HERE = Path(__file__).parent
HANDOFFS = ("openai_v2_handoffs", "agents_sdk_otel_handoffs", "agents_sdk_openinference_handoffs")
DELEGATIONS = ("agents_sdk_otel_delegation", "agents_sdk_openinference_delegation")
FILES = {f"{name}.jsonl" for name in (*HANDOFFS, *DELEGATIONS, "openai_v2_delegation")}
TOOLS = {
    "get_order": {"type": "object", "required": ["order_id"]},
    "check_refund_policy": {"type": "object", "required": ["input"]},
}
GRAPH = {"triage": ["billing"], "billing": ["writer"], "writer": []}
SCORES = {
    "tool_selection_accuracy": 1.0,
    "argument_correctness": 1.0,
    "handoff_accuracy": 1.0,
    "task_correctness": 1.0,
}


@cache
def _read(name: str) -> tuple[WorkflowRun, TraceReading]:
    reading = TraceReading()
    [run] = list(iter_trace_runs(HERE / f"{name}.jsonl", reading))
    return run, reading


def _step(run: WorkflowRun, name: str) -> Any:
    [step] = [s for s in run.steps if s.name == name]
    return step


def _graded(run: WorkflowRun, allowed: dict[str, list[str]], start: str) -> Any:
    definition = {
        "name": "support_traces",
        "version": "1",
        "steps": [{"name": s.name, "agent": s.agent_role} for s in run.steps],
        "evaluation": {
            "scoring_profile": "D",
            "gates": {
                "tool_call_schema_valid": {"tools": TOOLS},
                "no_forbidden_tool_invoked": {"forbidden": ["delete_account"]},
                "handoff_graph_respected": {"allowed": allowed, "start": start},
            },
        },
    }
    return evaluate_run(run, workflow=load_workflow(definition), scores=SCORES)


def test_every_file_here_is_tested() -> None:
    kept = {p.name for p in HERE.iterdir() if p.suffix == ".jsonl"}
    assert kept == FILES


@pytest.mark.parametrize("name", HANDOFFS)
def test_the_handoff_path_is_the_order_of_sibling_agents(name: str) -> None:
    run, reading = _read(name)
    assert reading.incomplete == {}
    assert agent_path(run) == ["triage", "billing", "writer"]
    ev = _graded(run, GRAPH, "triage")
    assert ev.hard_gates["handoff_graph_respected"], ev.reasons
    assert ev.passed, ev.reasons
    billing = _step(run, "billing")
    assert [(c["name"], c["executed"]) for c in billing.metadata["tool_calls"]] == [
        ("get_order", True)
    ]
    assert run.outputs == {"output": "Your refund for order A1042 is on its way."}


def test_an_orchestrating_root_agent_is_the_run_not_the_first_handoff() -> None:
    """The held-out case: ``invoke_agent support_agent`` holds triage, billing and writer."""
    run, _ = _read("openai_v2_handoffs")
    root = _step(run, "support_agent")
    # kept as a step (its own model call is counted), but it held no handoff
    assert root.metadata["agent_scope"] == "run" and root.metadata["input_tokens"] == 40
    assert run.tokens == 5 * 50
    ev = _graded(run, GRAPH, "triage")
    assert ev.hard_gates["handoff_graph_respected"], ev.reasons


def test_a_wrong_handoff_still_fails_by_name() -> None:
    run, _ = _read("openai_v2_handoffs")
    ev = _graded(run, {"triage": ["billing"], "billing": [], "writer": []}, "triage")
    assert not ev.hard_gates["handoff_graph_respected"]
    assert "'billing' -> 'writer'" in " ".join(ev.reasons)


@pytest.mark.parametrize("name", ["agents_sdk_otel_handoffs", "agents_sdk_openinference_handoffs"])
def test_the_agents_sdk_handoff_spans_are_the_steps_handoffs(name: str) -> None:
    run, _ = _read(name)
    assert _step(run, "triage").metadata["handoffs"] == ["billing"]
    assert _step(run, "billing").metadata["handoffs"] == ["writer"]
    assert "tool_calls" not in _step(run, "triage").metadata  # transfer_to_billing is no tool


def test_an_agent_used_as_a_tool_inside_a_handoff_agent_is_a_delegation() -> None:
    run, _ = _read("openai_v2_delegation")
    assert agent_path(run) == ["triage", "billing", "writer"]
    policy = _step(run, "policy_agent")
    assert policy.metadata["delegated_by"] == "billing"
    [call] = _step(run, "billing").metadata["tool_calls"]
    assert (call["name"], call["executed"]) == ("check_refund_policy", True)
    graph = {**GRAPH, "billing": ["writer", "policy_agent"]}
    ev = _graded(run, graph, "triage")
    assert ev.hard_gates["handoff_graph_respected"] and ev.passed, ev.reasons


def test_a_delegation_the_graph_does_not_allow_fails_by_name() -> None:
    """Nesting an agent never takes it past the graph: a delegation is an edge of it too."""
    run, _ = _read("openai_v2_delegation")
    ev = _graded(run, GRAPH, "triage")
    assert not ev.hard_gates["handoff_graph_respected"]
    assert "delegation 'billing' -> 'policy_agent'" in " ".join(ev.reasons)


@pytest.mark.parametrize("name", DELEGATIONS)
def test_an_agents_sdk_agent_as_tool_is_a_delegation(name: str) -> None:
    run, reading = _read(name)
    assert reading.incomplete == {}
    assert agent_path(run) == ["orchestrator"]
    assert _step(run, "policy_agent").metadata["delegated_by"] == "orchestrator"
    # the run's answer is the orchestrator's, not the last answer of the agent it asked
    assert run.outputs == {"output": "A double charge is refunded in full; yours is on its way."}
    ev = _graded(run, {"orchestrator": ["policy_agent"]}, "orchestrator")
    assert ev.hard_gates["handoff_graph_respected"] and ev.passed, ev.reasons
    refused = _graded(run, {"orchestrator": []}, "orchestrator")
    assert not refused.hard_gates["handoff_graph_respected"]


def test_a_run_over_the_held_out_trace_file_passes_the_handoff_gate() -> None:
    """The whole path a user takes: ``aieval.run`` with the trace file as its dataset."""
    definition = {
        "name": "support_traces",
        "version": "1",
        "steps": [{"name": name, "agent": name} for name in GRAPH],
        "evaluation": {
            "scoring_profile": "D",
            "gates": {"handoff_graph_respected": {"allowed": GRAPH, "start": "triage"}},
        },
    }
    result = run(
        name="held_out",
        dataset=HERE / "openai_v2_handoffs.jsonl",
        scorers=[],
        workflow=definition,
        store=None,
    )
    [sample] = result.samples
    assert sample.verdict is not None
    gates = {g.name: (g.passed, g.reason) for g in sample.verdict.gates}
    assert gates["handoff_graph_respected"] == (True, "every handoff is allowed")
