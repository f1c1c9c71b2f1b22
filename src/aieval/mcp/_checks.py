"""A task's checks over its played conversation: the tool use expected, the final answer.

``tool_use`` writes the sample's :class:`~aieval.core.Trajectory` into its score's metadata
(:data:`~aieval.core.TRAJECTORY_KEY`), every call with its error (the tool's own, or an
injected one), so per-tool figures read MCP runs as any other. Its pairing is the ``subset``
mode with ``subset`` arguments of the trajectory contract (:mod:`aieval.core`); a trajectory
scorer in :mod:`aieval.scorers` that pairs in these modes can take its place here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from aieval.conversations import Scenario
from aieval.core import TRAJECTORY_KEY, Conversation, Score, ToolMatch, ToolUse, Trajectory

__all__ = ["answer_check", "tool_use_check", "trajectory_of"]

#: the most characters of the final answer a pattern is matched against
MAX_ANSWER = 100_000


def _spec(scenario: Scenario) -> Mapping[str, Any]:
    spec = scenario.metadata.get("mcp_task")
    return spec if isinstance(spec, Mapping) else {}


def trajectory_of(conversation: Conversation, expected: list[ToolUse]) -> Trajectory:
    """The calls made (in order, with their errors) paired with the expected ones: each
    expected call with the first later call of that tool whose arguments include its own."""
    called = []
    for turn in conversation.turns:
        for call in turn.tool_calls:
            try:
                arguments, argument_error = json.loads(call.arguments or "{}"), None
            except ValueError as exc:
                arguments, argument_error = None, f"not JSON: {exc}"
            called.append(ToolUse(call.name, arguments, call.error, argument_error))
    matches: list[ToolMatch] = []
    used: set[int] = set()
    start = 0
    for e, want in enumerate(expected):
        found = None
        for c in range(start, len(called)):
            if called[c].name == want.name and _includes(called[c].arguments, want.arguments):
                found = c
                break
        if found is None:
            matches.append(ToolMatch(e, None))
        else:
            used.add(found)
            start = found + 1
            matches.append(ToolMatch(e, found, True if want.arguments is not None else None))
    matches += [ToolMatch(None, c) for c in range(len(called)) if c not in used]
    return Trajectory(tuple(called), tuple(expected), tuple(matches), (), "subset", "subset")


def _includes(arguments: Any, expected: Any) -> bool:
    if expected is None:
        return True
    if not isinstance(arguments, dict) or not isinstance(expected, dict):
        return bool(arguments == expected)
    return all(k in arguments and arguments[k] == v for k, v in expected.items())


def tool_use_check(conversation: Conversation, scenario: Scenario) -> Score:
    """1 when every expected call was made in order (its arguments included), else 0 naming
    the first one missing; ``None`` (with the trajectory kept) when none is expected."""
    expected = [
        ToolUse(c["name"], c.get("arguments")) for c in _spec(scenario).get("expect_tools") or ()
    ]
    trajectory = trajectory_of(conversation, expected)
    metadata = {TRAJECTORY_KEY: trajectory.to_dict()}
    if not expected:
        return Score(None, reason="the task expects no tool use", metadata=metadata)
    missing = [
        m.expected for m in trajectory.matches if m.called is None and m.expected is not None
    ]
    if missing:
        want = expected[missing[0]]
        made = ", ".join(c.name for c in trajectory.called) or "none"
        args = (
            "" if want.arguments is None else f" with {json.dumps(want.arguments, sort_keys=True)}"
        )
        return Score(
            0.0,
            reason=f"expected a call of {want.name}{args} (in order); calls made: {made}",
            metadata=metadata,
        )
    return Score(1.0, reason="every expected call was made, in order", metadata=metadata)


def answer_check(conversation: Conversation, scenario: Scenario) -> Score:
    """1 when the final answer contains every expected text (case-insensitive) and matches the
    pattern, else 0 naming what is missing."""
    spec = _spec(scenario)
    answer = ""
    for turn in reversed(conversation.turns):
        if turn.role == "assistant" and not turn.tool_calls:
            answer = turn.content[:MAX_ANSWER]
            break
    lowered = answer.lower()
    for text in spec.get("answer_contains") or ():
        if str(text).lower() not in lowered:
            return Score(0.0, reason=f"the final answer does not contain {text!r}")
    pattern = spec.get("answer_matches")
    if pattern is not None and re.search(str(pattern), answer) is None:
        return Score(0.0, reason=f"the final answer does not match {pattern!r}")
    return Score(1.0, reason="the final answer has what the task expects")
