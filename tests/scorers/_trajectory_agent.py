"""An eval author's Python assistant for trajectory tests: looks the order up, then answers."""

from __future__ import annotations

from aieval.conversations import TargetReply
from aieval.core import ToolCall, Turn


def agent(turns: tuple[Turn, ...]) -> TargetReply:
    """Calls ``lookup_order`` for order 1 once, then reports the status it got."""
    if not any(t.role == "tool" for t in turns):
        return TargetReply("", (ToolCall("c1", "lookup_order", '{"order_id": 1}'),))
    return TargetReply("your order has shipped")
