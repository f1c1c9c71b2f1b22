"""An eval author's Python for conversation runs: checks, a goal check, a state function."""

from __future__ import annotations

from typing import Any

from aieval.conversations import Scenario
from aieval.core import Conversation, Turn


def polite(turn: Turn, history: tuple[Turn, ...], scenario: Scenario) -> bool:
    """An answer is polite unless it says 'stupid'."""
    return "stupid" not in turn.content


def answered(conversation: Conversation, scenario: Scenario) -> float:
    """1 when the conversation has an assistant answer."""
    return 1.0 if any(t.role == "assistant" for t in conversation.turns) else 0.0


def shipped(scenario: Scenario, turns: tuple[Turn, ...]) -> bool:
    return any(t.role == "assistant" and "shipped" in t.content for t in turns)


TURN_CHECKS: dict[str, Any] = {"polite": polite}
CONVERSATION_CHECKS: dict[str, Any] = {"answered": answered}
GOAL_CHECKS: dict[str, Any] = {"shipped": shipped}


def rude_first(turns: tuple[Turn, ...]) -> str:
    """A target whose first answer is rude and whose later answers are right."""
    said = sum(1 for t in turns if t.role == "assistant")
    return "that is a stupid question" if said == 0 else "your order has shipped"


def kind(turns: tuple[Turn, ...]) -> str:
    return "your order has shipped"
