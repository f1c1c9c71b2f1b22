"""A stored conversation as text: the transcript ``aieval show`` prints."""

from __future__ import annotations

import json
from typing import Any

from aieval.core import Conversation

__all__ = ["transcript_lines"]


def transcript_lines(data: Any) -> list[str]:
    """One line per turn (``[n] role (source): content``), each tool call and its result
    indented under its turn, then the outcome; ``data`` is a stored record
    (:meth:`Conversation.to_dict`)."""
    conversation = Conversation.from_dict(data)
    lines = [f"conversation {conversation.scenario_id} (epoch {conversation.epoch})"]
    for number, turn in enumerate(conversation.turns, 1):
        lines.append(f"[{number}] {turn.role} ({turn.source}): {turn.content}")
        for call in turn.tool_calls:
            result = call.error if call.error is not None else call.result
            lines.append(f"    -> {call.name}({call.arguments}) = {_short(result)}")
    outcome = conversation.outcome
    ended = f"ended: {outcome.stop_reason}"
    if outcome.failure is not None:
        ended += f" ({outcome.failure_type}: {outcome.failure})"
    if conversation.branched_at is not None:
        ended += f"; branched at turn {conversation.branched_at}"
    lines.append(ended)
    return lines


def _short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
