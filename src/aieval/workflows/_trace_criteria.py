"""Profile D's criteria computed from what a trace records, for runs read from traces.

A trace holds the tool calls and the agents' handoffs, and the eval author declares which tools
exist (with their argument schemas), which are forbidden and which handoffs are allowed (the
inputs of profile D's gates). From those, three criteria have a defensible measure:

- ``tool_selection_accuracy``: the share of tool calls naming a declared tool that is not
  forbidden;
- ``argument_correctness``: of the calls to a declared tool, the share whose arguments satisfy
  its schema;
- ``handoff_accuracy``: the share of handoffs (the start included, when one is declared) that
  the handoff graph allows.

They measure validity against what the author declared, not agreement with an expected answer
(a trace has none): a scorer or the run's ``metadata.scores`` of the same name wins over them.
A trace with nothing to measure (no tool calls, one agent) leaves the criterion unscored, saying
why, and ``task_correctness`` is never computed: whether the task was done right is not in a
trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from aieval.errors import ConfigError
from aieval.scorers.tools import parse_tool_calls, tool_call_schema_valid
from aieval.workflows._gates import agent_path, tool_calls
from aieval.workflows._model import WorkflowRun

__all__ = ["TRACE_CRITERIA", "TraceCriterion", "trace_criteria"]

#: The criteria a trace can score, by name.
TRACE_CRITERIA = ("tool_selection_accuracy", "argument_correctness", "handoff_accuracy")

#: Why a trace cannot score these, by name.
NOT_IN_A_TRACE = {
    "task_correctness": (
        "a trace does not show whether the task was done right: give it a scorer named "
        "task_correctness (a judge or a check of the output)"
    ),
}


@dataclass(frozen=True, slots=True)
class TraceCriterion:
    """One criterion as a trace scores it: ``value`` in 0..1, or ``None`` with ``why`` not."""

    name: str
    value: float | None
    why: str


def trace_criteria(
    run: WorkflowRun, gate_inputs: Mapping[str, Any], names: Sequence[str]
) -> dict[str, TraceCriterion]:
    """The criteria of ``names`` that a trace scores, for a run read from a trace (else none).

    Args:
        run: the run; only one with ``metadata.trace`` is scored.
        gate_inputs: the inputs of profile D's gates, by gate name (``tool_call_schema_valid``:
            ``tools``; ``no_forbidden_tool_invoked``: ``forbidden``; ``handoff_graph_respected``:
            ``allowed``, ``start``).
        names: the profile's criteria.
    """
    if not isinstance(run.metadata.get("trace"), Mapping):
        return {}
    out: dict[str, TraceCriterion] = {}
    for name in names:
        if name == "tool_selection_accuracy":
            out[name] = _selection(run, gate_inputs)
        elif name == "argument_correctness":
            out[name] = _arguments(run, gate_inputs)
        elif name == "handoff_accuracy":
            out[name] = _handoffs(run, gate_inputs)
        elif name in NOT_IN_A_TRACE:
            out[name] = TraceCriterion(name, None, NOT_IN_A_TRACE[name])
    return out


def _tools(gate_inputs: Mapping[str, Any]) -> dict[str, Any] | None:
    """Declared tool name -> its parameters schema (``None``: no tools declared)."""
    given = gate_inputs.get("tool_call_schema_valid")
    tools = given.get("tools") if isinstance(given, Mapping) else None
    if isinstance(tools, Mapping):
        return dict(tools)
    if isinstance(tools, Sequence) and not isinstance(tools, str):
        schemas: dict[str, Any] = {}
        for tool in tools:
            function = tool.get("function", tool) if isinstance(tool, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                schemas[function["name"]] = function.get("parameters", {"type": "object"})
        return schemas
    return None


def _forbidden(gate_inputs: Mapping[str, Any]) -> set[str]:
    given = gate_inputs.get("no_forbidden_tool_invoked")
    names = given.get("forbidden") if isinstance(given, Mapping) else None
    return {str(n) for n in names} if isinstance(names, Sequence) else set()


def _calls(run: WorkflowRun) -> list[Any]:
    try:
        return list(parse_tool_calls(tool_calls(run)))
    except ConfigError:
        return []


_NO_TOOLS = "no tools declared (evaluation.gates.tool_call_schema_valid.tools) to measure it by"


def _selection(run: WorkflowRun, gate_inputs: Mapping[str, Any]) -> TraceCriterion:
    name = "tool_selection_accuracy"
    tools = _tools(gate_inputs)
    if tools is None:
        return TraceCriterion(name, None, _NO_TOOLS)
    calls = _calls(run)
    if not calls:
        return TraceCriterion(name, None, "the trace has no tool calls to judge the choice of")
    forbidden = _forbidden(gate_inputs)
    wrong = [c.name for c in calls if c.name not in tools or c.name in forbidden]
    share = (len(calls) - len(wrong)) / len(calls)
    why = f"{len(calls) - len(wrong)} of {len(calls)} tool calls name a declared, allowed tool"
    if wrong:
        why += f" (not: {', '.join(wrong)})"
    return TraceCriterion(name, share, why)


def _arguments(run: WorkflowRun, gate_inputs: Mapping[str, Any]) -> TraceCriterion:
    name = "argument_correctness"
    tools = _tools(gate_inputs)
    if tools is None:
        return TraceCriterion(name, None, _NO_TOOLS)
    known = [c for c in _calls(run) if c.name in tools]
    if not known:
        return TraceCriterion(name, None, "the trace has no calls to a declared tool")
    valid = [c for c in known if tool_call_schema_valid([c], tools).passed]
    why = f"{len(valid)} of {len(known)} calls to declared tools have arguments their schema takes"
    return TraceCriterion(name, len(valid) / len(known), why)


def _handoffs(run: WorkflowRun, gate_inputs: Mapping[str, Any]) -> TraceCriterion:
    name = "handoff_accuracy"
    given = gate_inputs.get("handoff_graph_respected")
    allowed = given.get("allowed") if isinstance(given, Mapping) else None
    if not isinstance(allowed, Mapping):
        why = "no handoff graph declared (evaluation.gates.handoff_graph_respected.allowed)"
        return TraceCriterion(name, None, why)
    start = given.get("start") if isinstance(given, Mapping) else None
    path = agent_path(run)
    moves: list[tuple[str | None, str]] = list(pairwise(path))
    if start is not None and path:
        moves.insert(0, (None, path[0]))
    if not moves:
        return TraceCriterion(name, None, "the trace has no handoff to judge")
    bad = [
        (a, b)
        for a, b in moves
        if (a is None and b != start) or (a is not None and b not in (allowed.get(a) or ()))
    ]
    why = f"{len(moves) - len(bad)} of {len(moves)} handoffs follow the declared graph"
    if bad:
        why += " (not: " + ", ".join(f"{a or 'start'} -> {b}" for a, b in bad) + ")"
    return TraceCriterion(name, (len(moves) - len(bad)) / len(moves), why)
