"""A scenario: one dataset row that says how a conversation goes, validated field by field.

A row is data from whoever wrote the dataset: it may set the goal, the persona, scripted user
turns, limits, recorded tool results, an expected final state and the names of checks. It never
names Python code, a provider, an endpoint, a key or a file; every field is on an allow-list and
anything else is refused, naming the row and the field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval.core import ToolUse
from aieval.errors import ConfigError, DatasetError
from aieval.scorers.state import StateMatch
from aieval.scorers.tools import expected_tool_uses

__all__ = [
    "MAX_TURNS_LIMIT",
    "Scenario",
    "ScenarioChecks",
    "ScenarioMessage",
    "StopRules",
    "ToolFixture",
    "ToolResult",
    "scenario_from_row",
]

#: the most user turns a scenario may allow (``max_turns``)
MAX_TURNS_LIMIT = 1000
#: ``max_turns`` when a row does not set it
DEFAULT_MAX_TURNS = 10
_FIELDS = frozenset(
    {
        "id",
        "goal",
        "persona",
        "initial_messages",
        "user_turns",
        "max_turns",
        "stop",
        "tools",
        "expected_state",
        "expected_tool_calls",
        "state_match",
        "checks",
        "metadata",
    }
)
_STOP_FIELDS = frozenset({"user_done", "goal_check"})
_TOOL_FIELDS = frozenset({"name", "description", "parameters", "result", "calls"})
_CALL_FIELDS = frozenset({"arguments", "result"})
_CHECK_FIELDS = frozenset({"turn", "conversation"})


@dataclass(frozen=True, slots=True)
class ScenarioMessage:
    """A message the conversation starts with (``initial_messages``)."""

    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A recorded result of a tool for given arguments (``None``: for any arguments)."""

    arguments: Mapping[str, Any] | None
    result: str


@dataclass(frozen=True, slots=True)
class ToolFixture:
    """A tool the row declares: its schema (sent to the target) and recorded results."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    results: tuple[ToolResult, ...] = ()

    def result_for(self, arguments: Any) -> str | None:
        """The recorded result for these (parsed) arguments: an exact match first, then the
        result for any arguments; ``None`` when the row records neither."""
        fallback = None
        wanted = _canonical(arguments)
        for entry in self.results:
            if entry.arguments is None:
                fallback = entry.result if fallback is None else fallback
            elif _canonical(entry.arguments) == wanted:
                return entry.result
        return fallback


@dataclass(frozen=True, slots=True)
class StopRules:
    """When a conversation ends before ``max_turns``: the simulated user says it is done
    (``user_done``), or the author's goal check named ``goal_check`` passes."""

    user_done: bool = True
    goal_check: str | None = None


@dataclass(frozen=True, slots=True)
class ScenarioChecks:
    """Names of checks the author registered: run on every assistant turn, or once on the
    whole conversation."""

    turn: tuple[str, ...] = ()
    conversation: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    """One validated scenario row.

    Attributes:
        id: the scenario's id (unique in its dataset).
        goal: what the simulated user wants.
        persona: who the simulated user is.
        initial_messages: messages the conversation starts with.
        user_turns: scripted user turns, said first, in order, before the simulated user.
        max_turns: the most user turns (scripted, simulated or replayed) in the conversation.
        stop: the stop rules besides the turn limit.
        tools: the tools the row declares, with their recorded results.
        expected_state: the final state the conversation should reach (for checks).
        expected_tool_calls: the tool calls the conversation should make (for
            ``trajectory_match``), ``None`` when the row gives none.
        state_match: how loosely the final state must match it (ignored paths, a numeric
            tolerance, unordered lists).
        checks: check names per turn and per conversation.
        metadata: free-form data, kept as given.
    """

    id: str
    goal: str
    persona: str = ""
    initial_messages: tuple[ScenarioMessage, ...] = ()
    user_turns: tuple[str, ...] = ()
    max_turns: int = DEFAULT_MAX_TURNS
    stop: StopRules = StopRules()
    tools: tuple[ToolFixture, ...] = ()
    expected_state: Any = None
    expected_tool_calls: tuple[ToolUse, ...] | None = None
    state_match: StateMatch = field(default_factory=StateMatch)
    checks: ScenarioChecks = ScenarioChecks()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def tool(self, name: str) -> ToolFixture | None:
        """The row's tool of that name."""
        return next((t for t in self.tools if t.name == name), None)


class _Row:
    """Reads one row's fields, raising a :class:`DatasetError` that names row and field."""

    def __init__(self, source: str, where: str, line: int | None) -> None:
        self.source, self.where, self.line = source, where, line

    def fail(self, name: str, message: str) -> DatasetError:
        return DatasetError(
            f"{self.where}field {name!r}: {message}", source=self.source, line=self.line
        )

    def text(self, value: Any, name: str, *, empty: bool = False) -> str:
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.fail(name, f"expected a non-empty string, got {_shown(value)}")
        return value

    def mapping(self, value: Any, name: str, allowed: frozenset[str] | None) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(name, f"expected an object, got {_shown(value)}")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    raise self.fail(
                        f"{name}.{key}", f"unknown field; allowed: {', '.join(sorted(allowed))}"
                    )
        return value

    def items(self, value: Any, name: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(name, f"expected a list, got {_shown(value)}")
        return value

    def names(
        self, value: Any, name: str, known: Collection[str] | None, kind: str
    ) -> tuple[str, ...]:
        found = tuple(self.text(v, f"{name}[{i}]") for i, v in enumerate(self.items(value, name)))
        for index, entry in enumerate(found):
            self.known(entry, f"{name}[{index}]", known, kind)
        return found

    def known(self, entry: str, name: str, known: Collection[str] | None, kind: str) -> None:
        if entry not in (known or ()):
            listed = ", ".join(sorted(known or ())) or "none"
            raise self.fail(
                name,
                f"{entry!r} is not a {kind} the eval registered (registered: {listed}); a row "
                f"may only name {kind}s the eval's author registered",
            )


def scenario_from_row(
    row: Any,
    *,
    source: str,
    line: int | None = None,
    where: str = "",
    checks: Collection[str] | None = None,
    goal_checks: Collection[str] | None = None,
) -> Scenario:
    """Validate one row into a :class:`Scenario`.

    ``checks`` and ``goal_checks`` are the names the author registered; a row naming another is
    refused (``None``: none registered). ``where`` prefixes messages (``"row 3: "``
    for a YAML list) when ``line`` does not say it.
    """
    r = _Row(source, where, line)
    if not isinstance(row, Mapping):
        raise DatasetError(
            f"{where}a scenario row must be an object, got {_shown(row)}", source=source, line=line
        )
    for key in row:
        if key not in _FIELDS:
            raise r.fail(
                str(key), f"unknown field; a scenario row has: {', '.join(sorted(_FIELDS))}"
            )
    for required in ("id", "goal"):
        if required not in row:
            raise r.fail(required, "missing (every scenario needs an id and a goal)")
    max_turns = row.get("max_turns", DEFAULT_MAX_TURNS)
    if (
        not isinstance(max_turns, int)
        or isinstance(max_turns, bool)
        or not 1 <= max_turns <= MAX_TURNS_LIMIT
    ):
        raise r.fail(
            "max_turns",
            f"expected a whole number from 1 to {MAX_TURNS_LIMIT}, got {_shown(max_turns)}",
        )
    user_turns = tuple(
        r.text(t, f"user_turns[{i}]")
        for i, t in enumerate(r.items(row.get("user_turns", []), "user_turns"))
    )
    if len(user_turns) > max_turns:
        raise r.fail(
            "user_turns", f"{len(user_turns)} scripted turns, more than max_turns ({max_turns})"
        )
    metadata = row.get("metadata", {})
    return Scenario(
        id=_scenario_id(r, row["id"]),
        goal=r.text(row["goal"], "goal"),
        persona=r.text(row.get("persona", ""), "persona", empty=True),
        initial_messages=_messages(r, row.get("initial_messages", [])),
        user_turns=user_turns,
        max_turns=max_turns,
        stop=_stop(r, row.get("stop", {}), goal_checks),
        tools=_tools(r, row.get("tools", [])),
        expected_state=_json_value(r, row.get("expected_state"), "expected_state"),
        expected_tool_calls=_expected_calls(r, row.get("expected_tool_calls")),
        state_match=_state_match(r, row.get("state_match")),
        checks=_checks(r, row.get("checks", {}), checks),
        metadata=dict(r.mapping(_json_value(r, metadata, "metadata"), "metadata", None)),
    )


def _state_match(r: _Row, value: Any) -> StateMatch:
    try:
        return StateMatch.parse(value, "state_match")
    except ValueError as exc:
        name, _, message = str(exc).partition(": ")
        raise r.fail(name, message) from None


def _scenario_id(r: _Row, value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return r.text(value, "id")


def _messages(r: _Row, value: Any) -> tuple[ScenarioMessage, ...]:
    found = []
    for index, entry in enumerate(r.items(value, "initial_messages")):
        name = f"initial_messages[{index}]"
        message = r.mapping(entry, name, frozenset({"role", "content"}))
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise r.fail(f"{name}.role", f"expected 'user' or 'assistant', got {_shown(role)}")
        found.append(
            ScenarioMessage(
                str(role), r.text(message.get("content"), f"{name}.content", empty=True)
            )
        )
    return tuple(found)


def _stop(r: _Row, value: Any, goal_checks: Collection[str] | None) -> StopRules:
    stop = r.mapping(value, "stop", _STOP_FIELDS)
    user_done = stop.get("user_done", True)
    if not isinstance(user_done, bool):
        raise r.fail("stop.user_done", f"expected true or false, got {_shown(user_done)}")
    goal = stop.get("goal_check")
    if goal is not None:
        goal = r.text(goal, "stop.goal_check")
        r.known(goal, "stop.goal_check", goal_checks, "goal check")
    return StopRules(user_done, goal)


def _tools(r: _Row, value: Any) -> tuple[ToolFixture, ...]:
    tools: list[ToolFixture] = []
    for index, entry in enumerate(r.items(value, "tools")):
        name = f"tools[{index}]"
        spec = r.mapping(entry, name, _TOOL_FIELDS)
        tool_name = r.text(spec.get("name"), f"{name}.name")
        if any(t.name == tool_name for t in tools):
            raise r.fail(f"{name}.name", f"tool {tool_name!r} is declared twice")
        results = []
        if "result" in spec:
            results.append(ToolResult(None, _result(r, spec["result"], f"{name}.result")))
        for i, call in enumerate(r.items(spec.get("calls", []), f"{name}.calls")):
            where = f"{name}.calls[{i}]"
            recorded = r.mapping(call, where, _CALL_FIELDS)
            given = _json_value(r, recorded.get("arguments", {}), f"{where}.arguments")
            arguments = r.mapping(given, f"{where}.arguments", None)
            results.append(
                ToolResult(dict(arguments), _result(r, recorded.get("result"), f"{where}.result"))
            )
        tools.append(
            ToolFixture(
                name=tool_name,
                description=r.text(spec.get("description", ""), f"{name}.description", empty=True),
                parameters=_parameters(r, spec.get("parameters"), f"{name}.parameters"),
                results=tuple(results),
            )
        )
    return tuple(tools)


def _parameters(r: _Row, value: Any, name: str) -> dict[str, Any]:
    """A tool's JSON Schema (an empty object schema when not given)."""
    if value is None:
        return {"type": "object", "properties": {}}
    return dict(r.mapping(_json_value(r, value, name), name, None))


def _result(r: _Row, value: Any, name: str) -> str:
    """A recorded result: text as given, any other JSON value as its JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        raise r.fail(name, "missing: a recorded call needs its result")
    return json.dumps(_json_value(r, value, name), sort_keys=True, ensure_ascii=False)


def _checks(r: _Row, value: Any, known: Collection[str] | None) -> ScenarioChecks:
    checks = r.mapping(value, "checks", _CHECK_FIELDS)
    return ScenarioChecks(
        turn=r.names(checks.get("turn", []), "checks.turn", known, "check"),
        conversation=r.names(checks.get("conversation", []), "checks.conversation", known, "check"),
    )


def _expected_calls(r: _Row, value: Any) -> tuple[ToolUse, ...] | None:
    """The row's expected tool calls, read as ``trajectory_match`` reads them."""
    if value is None:
        return None
    try:
        return expected_tool_uses(
            _json_value(r, value, "expected_tool_calls"), "expected_tool_calls"
        )
    except ConfigError as exc:
        raise r.fail("expected_tool_calls", str(exc)) from None


def _json_value(r: _Row, value: Any, name: str) -> Any:
    """``value`` when it is plain JSON (a YAML row may hold dates, sets or odd keys)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise r.fail(name, f"not a plain JSON value: {exc}") from None
    return value


def _canonical(value: Any) -> str:
    """JSON text that tells ``1``, ``1.0`` and ``true`` apart (Python's ``==`` does not)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
