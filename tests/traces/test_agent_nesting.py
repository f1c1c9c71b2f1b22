"""The handoff path from how agent spans nest: siblings hand off, a nested agent is a
delegation, and a lone outermost agent holding agents directly is the run itself (the real
traces of each shape are in tests/conformance/agent_traces/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aieval.traces import load_traces
from aieval.workflows import WorkflowRun, agent_path


def _agent(span_id: str, name: str, parent: str = "", start: int = 1) -> dict[str, Any]:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return _span(span_id, f"invoke_agent {name}", parent, start, attrs)


def _tool(span_id: str, name: str, parent: str, start: int) -> dict[str, Any]:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return _span(span_id, f"execute_tool {name}", parent, start, attrs)


def _span(span_id: str, name: str, parent: str, start: int, attrs: dict[str, str]) -> Any:
    return {
        "traceId": "a" * 32,
        "spanId": span_id.rjust(16, "0"),
        "parentSpanId": parent.rjust(16, "0") if parent else "",
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": "100",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def _run(tmp_path: Path, *spans: dict[str, Any]) -> WorkflowRun:
    file = tmp_path / "traces.jsonl"
    request = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    file.write_text(json.dumps(request) + "\n")
    [run] = load_traces(file)
    return run


def _scopes(run: WorkflowRun) -> dict[str, Any]:
    return {
        s.name: s.metadata.get("agent_scope") or s.metadata.get("delegated_by") for s in run.steps
    }


def test_a_lone_agent_is_its_own_path(tmp_path: Path) -> None:
    run = _run(tmp_path, _agent("1", "triage"))
    assert agent_path(run) == ["triage"] and _scopes(run) == {"triage": None}


def test_a_lone_root_holding_agents_directly_is_the_run(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        _agent("1", "support_agent"),
        _agent("2", "triage", "1", 2),
        _agent("3", "billing", "1", 3),
        _agent("4", "checker", "3", 4),  # nested in a path agent: a delegation
    )
    assert agent_path(run) == ["triage", "billing"]
    assert _scopes(run) == {
        "support_agent": "run",
        "triage": None,
        "billing": None,
        "checker": "billing",
    }


def test_a_root_that_only_calls_agents_as_tools_holds_control(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        _agent("1", "orchestrator"),
        _tool("2", "research", "1", 2),
        _agent("3", "researcher", "2", 3),
    )
    assert agent_path(run) == ["orchestrator"]
    assert _scopes(run) == {"orchestrator": None, "researcher": "orchestrator"}


def test_sibling_roots_each_hold_control_and_their_nested_agents_are_delegations(
    tmp_path: Path,
) -> None:
    run = _run(
        tmp_path,
        _span("1", "support workflow", "", 1, {}),
        _agent("2", "triage", "1", 2),
        _agent("3", "helper", "2", 3),
        _agent("4", "billing", "1", 4),
    )
    assert agent_path(run) == ["triage", "billing"]
    assert _scopes(run)["helper"] == "triage"


def test_an_invoke_workflow_span_is_a_container(tmp_path: Path) -> None:
    workflow = {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "support"}
    run = _run(
        tmp_path,
        _span("1", "support app", "", 1, {}),
        _span("2", "invoke_workflow support", "1", 1, workflow),
        _agent("3", "triage", "2", 2),
        _agent("4", "billing", "2", 3),
    )
    assert agent_path(run) == ["triage", "billing"]
    assert run.metadata["trace"]["unmapped"] == {}
