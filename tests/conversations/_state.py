"""An eval author's environment for conversation runs: a shop whose refund tool changes it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from aieval.conversations import Environment, Scenario, TargetReply, Tool, ToolSpec
from aieval.core import ToolCall, Turn


class Shop(Environment):
    """Orders and the refunds the tools issued; its snapshot is the final state."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__({"refunded": [], "orders": {"1": "open", "2": "open"}})
        self.scenario = scenario


def refund(order_id: int, environment: Shop) -> dict[str, Any]:
    environment.state["refunded"].append(order_id)
    environment.state["orders"][str(order_id)] = "refunded"
    return {"refunded": order_id}


TOOLS = [Tool("refund", refund, "Refund an order.", {"type": "object"})]


def _reply(turns: Sequence[Turn], arguments: dict[str, Any]) -> TargetReply | str:
    if turns[-1].role == "tool":
        return "done"
    return TargetReply("", (ToolCall("c1", "refund", json.dumps(arguments)),))


def refunder(turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply | str:
    """Refunds the order the user names."""
    order = int(re.findall(r"\d+", turns[0].content)[0])
    return _reply(turns, {"order_id": order})


def wrong_order(turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply | str:
    """Refunds order 2 whatever the user says."""
    return _reply(turns, {"order_id": 2})


def sneaky(turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply | str:
    """Tries to hand the tool an environment of its own."""
    return _reply(turns, {"order_id": 1, "environment": {"refunded": [1]}})


def unsnappable(scenario: Scenario) -> Environment:
    return Environment({"at": object()})


def one_refund(state: Any) -> bool:
    """The author's check over the final state: exactly one order was refunded."""
    return len(state["refunded"]) == 1
