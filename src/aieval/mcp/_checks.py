"""A task's checks over its played conversation: the tool use expected, the final answer.

``tool_use`` writes the sample's :class:`~aieval.core.Trajectory` into its score's metadata
(:data:`~aieval.core.TRAJECTORY_KEY`), every call with its error (the tool's own, or an
injected one), so per-tool figures read MCP runs as any other. Its pairing is the trajectory
scorer's (:func:`aieval.scorers.match_trajectory`): ``in_order`` mode, ``superset`` arguments.

``answer`` matches the task's ``answer_matches`` pattern as the ``regex`` check does: in a worker
under the per-sample expression limit, since the text is the model's (from the server's
results) and a pattern may backtrack without end on a crafted one; past the limit the sample's
error (:class:`~aieval.errors.ScorerError`) names the pattern and the limit.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from aieval.conversations import Scenario
from aieval.core import TRAJECTORY_KEY, Conversation, Score, ToolUse, Trajectory
from aieval.errors import ScorerError
from aieval.scorers import match_trajectory, regex
from aieval.scorers.tools import tool_uses

__all__ = ["answer_check", "tool_use_check", "trajectory_of"]

#: the most characters of the final answer a pattern is matched against
MAX_ANSWER = 100_000


def _spec(scenario: Scenario) -> Mapping[str, Any]:
    spec = scenario.metadata.get("mcp_task")
    return spec if isinstance(spec, Mapping) else {}


def trajectory_of(conversation: Conversation, expected: list[ToolUse]) -> Trajectory:
    """The calls made (in order, with their errors) paired with the expected ones by the
    trajectory scorer's matcher: ``in_order`` (the expected calls a subsequence of those made),
    ``superset`` arguments (a call's arguments include the expected ones)."""
    return match_trajectory(
        tool_uses(None, conversation), expected, mode="in_order", arguments="superset"
    )


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
    matched = {m.expected for m in trajectory.matches if trajectory.is_match(m)}
    missing = [e for e in range(len(expected)) if e not in matched]
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


async def answer_check(conversation: Conversation, scenario: Scenario) -> Score:
    """1 when the final answer contains every expected text (case-insensitive) and matches the
    pattern, else 0 naming what is missing.

    Raises:
        ScorerError: the pattern's match took longer than the per-sample expression limit.
    """
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
    if pattern is not None:
        # the bounded check blocks its thread up to the limit: off the event loop
        try:
            found = await asyncio.to_thread(regex, answer, pattern=str(pattern))
        except ScorerError as exc:
            raise ScorerError(f"answer_matches: {exc}") from None
        if not found.value:
            return Score(0.0, reason=f"the final answer does not match {pattern!r}")
    return Score(1.0, reason="the final answer has what the task expects")
