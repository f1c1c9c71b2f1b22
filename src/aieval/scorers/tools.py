"""Tool use and routing (profile D): tool-call validity, selection, arguments and handoffs.

Tool calls are read in the OpenAI chat format: an assistant message (or its JSON) with
``tool_calls: [{"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}]``, or a
plain list of such calls, or of ``{"name", "arguments"}`` dicts. ``arguments`` may be a JSON
string (as the API returns it) or an already-parsed dict.

Trajectories (calls made against calls expected, with partial credit) are
:func:`aieval.scorers.trajectory_match`; :func:`tool_uses` and :func:`expected_tool_uses` read
a sample's calls and a row's expected calls as :class:`aieval.core.ToolUse`.

Example:
    >>> call = {"function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    >>> calls = parse_tool_calls({"tool_calls": [call]})
    >>> calls[0].name, calls[0].arguments
    ('get_weather', {'city': 'Oslo'})
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from aieval.errors import ConfigError
from aieval.grading import GateResult, register_gate
from aieval.scorers._answers import require_expected
from aieval.scorers._scorer import Scorer
from aieval.scorers._trajectory_sources import called_uses as tool_uses
from aieval.scorers._trajectory_sources import expected_uses as expected_tool_uses

__all__ = [
    "ToolCall",
    "argument_exact_match",
    "argument_f1",
    "expected_tool_uses",
    "handoff_accuracy",
    "handoff_graph_respected",
    "no_forbidden_tool_invoked",
    "parse_tool_calls",
    "tool_call_schema_valid",
    "tool_call_scorer",
    "tool_selection_accuracy",
    "tool_uses",
]


@dataclass(slots=True, frozen=True)
class ToolCall:
    """One tool call.

    Attributes:
        name: the function name.
        arguments: the parsed arguments, or ``None`` when they are not a JSON object.
        raw_arguments: the arguments as given.
        error: why the arguments could not be parsed, if they could not.
    """

    name: str
    arguments: dict[str, Any] | None
    raw_arguments: Any = None
    error: str | None = None


def parse_tool_calls(value: Any) -> list[ToolCall]:
    """Read tool calls from a message, a list of calls, or their JSON text.

    Malformed ``arguments`` do not raise: the call keeps ``arguments=None`` and an ``error``,
    so gates can report it. A value that holds no recognizable calls raises ``ConfigError``.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError as exc:
            raise ConfigError(f"tool calls: the text is not JSON ({exc})") from None
    if isinstance(value, Mapping):
        value = value.get("tool_calls") or []
    if not isinstance(value, Iterable):
        raise ConfigError(f"tool calls: expected a message or a list, got {type(value).__name__}")
    return [_parse_call(item, index) for index, item in enumerate(value)]


def _parse_call(item: Any, index: int) -> ToolCall:
    if isinstance(item, ToolCall):
        return item
    if not isinstance(item, Mapping):
        raise ConfigError(f"tool call {index}: expected an object, got {type(item).__name__}")
    function = item.get("function", item)
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ConfigError(f"tool call {index}: missing function name")
    raw = function.get("arguments", {})
    if isinstance(raw, Mapping):
        return ToolCall(name, dict(raw), raw)
    if not isinstance(raw, str):
        return ToolCall(name, None, raw, f"arguments are a {type(raw).__name__}, not JSON text")
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return ToolCall(name, None, raw, f"arguments are not valid JSON ({exc})")
    if not isinstance(parsed, dict):
        return ToolCall(name, None, raw, "arguments are JSON but not an object")
    return ToolCall(name, parsed, raw)


def _schemas(tools: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Tool name -> parameters schema, from an OpenAI ``tools`` list or a name->schema map."""
    if isinstance(tools, Mapping):
        return dict(tools)
    schemas: dict[str, Any] = {}
    for tool in tools:
        function = tool.get("function", tool)
        schemas[str(function["name"])] = function.get("parameters", {"type": "object"})
    return schemas


def tool_call_schema_valid(
    calls: Any, tools: Mapping[str, Any] | Sequence[Mapping[str, Any]]
) -> GateResult:
    """Gate: every call names a known tool and its arguments satisfy the tool's JSON Schema.

    Args:
        calls: anything :func:`parse_tool_calls` reads.
        tools: the OpenAI ``tools`` list given to the model, or a name -> schema mapping.
    """
    schemas = _schemas(tools)
    problems: list[dict[str, Any]] = []
    for index, call in enumerate(parse_tool_calls(calls)):
        for message in _call_problems(call, schemas):
            problems.append({"call": index, "tool": call.name, "problem": message})
    if problems:
        first = problems[0]
        return GateResult(
            "tool_call_schema_valid",
            False,
            f"{len(problems)} problem(s); call {first['call']} ({first['tool']}): "
            f"{first['problem']}",
            {"problems": problems},
        )
    return GateResult("tool_call_schema_valid", True, "every tool call matches its schema")


def _call_problems(call: ToolCall, schemas: Mapping[str, Any]) -> list[str]:
    if call.name not in schemas:
        return [f"unknown tool {call.name!r}"]
    if call.arguments is None:
        return [call.error or "arguments are not a JSON object"]
    from jsonschema import Draft202012Validator  # imported on first use: a run seldom needs it
    from jsonschema.exceptions import SchemaError

    try:
        validator = Draft202012Validator(schemas[call.name])
        errors = sorted(validator.iter_errors(call.arguments), key=lambda e: list(e.path))
    except SchemaError as exc:
        raise ConfigError(f"tool {call.name!r}: its parameters schema is invalid: {exc}") from exc
    return [f"{'/'.join(map(str, e.path)) or '<root>'}: {e.message}" for e in errors]


def no_forbidden_tool_invoked(calls: Any, forbidden: Collection[str]) -> GateResult:
    """Gate: none of the calls uses a tool in ``forbidden``."""
    used = [call.name for call in parse_tool_calls(calls) if call.name in set(forbidden)]
    if used:
        return GateResult(
            "no_forbidden_tool_invoked",
            False,
            f"forbidden tool(s) invoked: {', '.join(sorted(set(used)))}",
            {"invoked": used},
        )
    return GateResult("no_forbidden_tool_invoked", True, "no forbidden tool was invoked")


def tool_selection_accuracy(calls: Any, expected: Sequence[str], *, ordered: bool = False) -> float:
    """How well the called tools match the expected ones.

    Unordered: matched calls (as multisets) over ``max(len(called), len(expected))``, so both
    missing and extra calls cost. Ordered: position-wise matches over the same denominator.
    1.0 when both are empty.

    Example:
        >>> tool_selection_accuracy([{"name": "a"}, {"name": "c"}], ["a", "b"])
        0.5
    """
    names = [call.name for call in parse_tool_calls(calls)]
    denominator = max(len(names), len(expected))
    if denominator == 0:
        return 1.0
    if ordered:
        matched = sum(a == b for a, b in zip(names, expected, strict=False))
    else:
        matched = sum((Counter(names) & Counter(expected)).values())
    return matched / denominator


def argument_exact_match(arguments: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> float:
    """1.0 when the arguments equal the expected ones as JSON values, else 0.0."""
    if arguments is None:
        return 0.0
    return 1.0 if _canonical(arguments) == _canonical(expected) else 0.0


def argument_f1(arguments: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> float:
    """F1 over (key path, value) pairs of nested arguments; 1.0 when both are empty.

    Example:
        >>> argument_f1({"city": "Oslo", "unit": "F"}, {"city": "Oslo", "unit": "C"})
        0.5
    """
    if arguments is None:
        return 0.0
    predicted, gold = Counter(_pairs(arguments)), Counter(_pairs(expected))
    if not predicted and not gold:
        return 1.0
    overlap = sum((predicted & gold).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / sum(predicted.values()), overlap / sum(gold.values())
    return 2 * precision * recall / (precision + recall)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _pairs(arguments: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for key, value in arguments.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            pairs.extend(_pairs(value, path + "."))
        else:
            pairs.append((path, _canonical(value)))
    return pairs


def handoff_graph_respected(
    path: Sequence[str],
    allowed: Mapping[str, Collection[str]],
    *,
    start: str | None = None,
    delegations: Sequence[Sequence[str]] = (),
) -> GateResult:
    """Gate: every consecutive handoff in ``path`` (agent names, in order) is allowed.

    Args:
        path: the agents that held control, in order, e.g. ``["triage", "billing"]``.
        allowed: agent -> agents it may hand off to (or call as a tool).
        start: the agent that must start, if any.
        delegations: ``(caller, agent)`` pairs, an agent that another one used as a tool; each
            must be an edge of ``allowed`` too, so nesting an agent never takes it past the
            graph.
    """
    violations: list[dict[str, Any]] = [
        {"step": i, "from": a, "to": b}
        for i, (a, b) in enumerate(pairwise(path), start=1)
        if b not in allowed.get(a, ())
    ]
    if start is not None and path and path[0] != start:
        violations.insert(0, {"step": 0, "from": None, "to": path[0]})
    violations += [
        {"step": None, "from": a, "to": b, "delegation": True}
        for a, b in delegations
        if b not in allowed.get(a, ())
    ]
    if violations:
        first = violations[0]
        reason = (
            f"run starts with {first['to']!r}, expected {start!r}"
            if first["from"] is None
            else f"delegation {first['from']!r} -> {first['to']!r} (an agent used as a tool) "
            "is not allowed"
            if first.get("delegation")
            else f"handoff {first['from']!r} -> {first['to']!r} (step {first['step']}) "
            "is not allowed"
        )
        return GateResult("handoff_graph_respected", False, reason, {"violations": violations})
    return GateResult("handoff_graph_respected", True, "every handoff is allowed")


def handoff_accuracy(path: Sequence[str], expected: Sequence[str]) -> float:
    """Position-wise agreement of the agent path with the expected one, over the longer path.

    Example:
        >>> handoff_accuracy(["triage", "billing"], ["triage", "refunds"])
        0.5
    """
    denominator = max(len(path), len(expected))
    if denominator == 0:
        return 1.0
    return sum(a == b for a, b in zip(path, expected, strict=False)) / denominator


def _expected_calls(expected: Any) -> list[ToolCall]:
    if isinstance(expected, Mapping) and "tool_calls" not in expected:
        expected = [expected]
    return parse_tool_calls(expected)


def tool_call_scorer(
    metric: str = "selection",
    *,
    tools: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    ordered: bool = False,
) -> Scorer:
    """A per-sample scorer over the tool calls in the prediction.

    The prediction is the assistant message (or its JSON) with ``tool_calls``; the expected
    value is the list of expected calls (``{"name", "arguments"}``). Metrics:
    ``selection`` (:func:`tool_selection_accuracy`), ``arguments_exact`` and
    ``arguments_f1`` (mean over expected calls, each paired with the first unused predicted
    call of the same tool; unmatched expected calls score 0) and ``schema_valid`` (needs
    ``tools``; 1.0 when :func:`tool_call_schema_valid` passes).

    Example:
        >>> f1 = tool_call_scorer("arguments_f1")
        >>> f1('{"tool_calls": [{"function": {"name": "a", "arguments": "{\\\\"x\\\\": 1}"}}]}',
        ...    [{"name": "a", "arguments": {"x": 1}}])
        1.0
    """
    if metric not in ("selection", "arguments_exact", "arguments_f1", "schema_valid"):
        raise ConfigError(
            f"tool_call_scorer: unknown metric {metric!r}; use selection, arguments_exact, "
            "arguments_f1 or schema_valid"
        )
    if metric == "schema_valid" and tools is None:
        raise ConfigError("tool_call_scorer('schema_valid') needs tools=[...] (the tool schemas)")

    def score(prediction: Any, expected: Any) -> float:
        if metric == "schema_valid":
            assert tools is not None
            return 1.0 if tool_call_schema_valid(prediction, tools).passed else 0.0
        require_expected(expected, f"tool_{metric}")  # [] is "no call expected"; None is unknown
        gold = _expected_calls(expected or [])
        if metric == "selection":
            return tool_selection_accuracy(prediction, [c.name for c in gold], ordered=ordered)
        return _argument_score(parse_tool_calls(prediction), gold, metric)

    return Scorer(score, name=f"tool_{metric}")


def _argument_score(calls: list[ToolCall], gold: list[ToolCall], metric: str) -> float:
    if not gold:
        return 1.0 if not calls else 0.0
    compare = argument_exact_match if metric == "arguments_exact" else argument_f1
    unused = list(calls)
    total = 0.0
    for want in gold:
        match = next((c for c in unused if c.name == want.name), None)
        if match is not None:
            unused.remove(match)
            total += compare(match.arguments, want.arguments or {})
    return total / len(gold)


register_gate("tool_call_schema_valid", tool_call_schema_valid)
register_gate("no_forbidden_tool_invoked", no_forbidden_tool_invoked)
register_gate("handoff_graph_respected", handoff_graph_respected)
