"""The example's parts the eval's author writes: the assistant under test (a Python target),
the refund tool, the goal check, the checks per turn and per conversation, the final state, and
a scripted stand-in for the simulated user's model.

Everything here is the author's code; the scenario rows (scenarios.yaml) only name the tools and
checks registered below.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from aieval.conversations import Scenario, TargetReply, Tool, ToolSpec
from aieval.core import Conversation, ToolCall, Turn
from aieval.providers import ChatRequest, ChatResponse

REFUNDS: list[int] = []


def issue_refund(order_id: int) -> dict[str, object]:
    """The author's Python tool: the scenario row can offer it, never name other code."""
    REFUNDS.append(order_id)
    return {"refunded": order_id}


TOOLS = [
    Tool(
        "issue_refund",
        issue_refund,
        "Refund an order.",
        {"type": "object", "properties": {"order_id": {"type": "integer"}}},
    )
]


def refund_issued(scenario: Scenario, turns: tuple[Turn, ...]) -> bool:
    """The goal check the refund scenario names: a refund call succeeded."""
    return any(c.name == "issue_refund" and c.error is None for t in turns for c in t.tool_calls)


GOAL_CHECKS = {"refund_issued": refund_issued}


def polite(turn: Turn, history: tuple[Turn, ...], scenario: Scenario) -> bool:
    """A turn check: no answer is rude."""
    return not re.search(r"\b(stupid|whatever|obviously)\b", turn.content, re.IGNORECASE)


def told_status(conversation: Conversation, scenario: Scenario) -> bool:
    """A conversation check: the customer was told what happened to the order."""
    return any(
        t.role == "assistant" and re.match(r"(Your order is|Done: order)", t.content)
        for t in conversation.turns
    )


def final_state(conversation: Conversation, scenario: Scenario) -> dict[str, str] | None:
    """The state the conversation ended in, compared with a row's ``expected_state``."""
    for turn in reversed(conversation.turns):
        if turn.role == "assistant" and (told := re.match(r"Your order is (\w+)", turn.content)):
            return {"told_status": told[1]}
    return None


TURN_CHECKS = {"polite": polite}
CONVERSATION_CHECKS = {"told_status": told_status}
CHECKS = {*TURN_CHECKS, *CONVERSATION_CHECKS}  # the names a row may ask for


def support_bot(turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply | str:
    """The assistant under test: looks orders up, refunds broken ones, knows the hours."""
    last = turns[-1]
    if last.role == "tool":
        data = json.loads(last.content)
        if "refunded" in data:
            return f"Done: order {data['refunded']} is refunded."
        if data.get("damaged"):
            order = _order(turns)
            return TargetReply("", (ToolCall(f"r{len(turns)}", "issue_refund", _args(order)),))
        return f"Your order is {data['status']}."
    text = last.content.lower()
    order = _order(turns)
    if order is not None and "order" in text:
        return TargetReply("", (ToolCall(f"l{len(turns)}", "lookup_order", _args(order)),))
    if "sunday" in text:
        return "On Sunday we open at 10:00."
    if "monday" in text:
        return "On Monday we open at 08:00."
    return "Could you tell me your order number?"


def _order(turns: Sequence[Turn]) -> int | None:
    for turn in reversed(turns):
        if turn.role == "user" and (found := re.search(r"\b(\d{4})\b", turn.content)):
            return int(found[1])
    return None


def _args(order: int | None) -> str:
    return json.dumps({"order_id": order})


class ScriptedUserModel:
    """A provider standing in for the simulated user's model, so the example runs offline.

    With a real model, give ``SimulatedUser`` any configured provider instead, e.g.
    ``build_provider("ollama")`` for a local one (in eval.yaml: ``user: {provider: ollama,
    model: llama3.1}``).
    """

    name = "scripted-user"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        system = request.messages[0]["content"]
        said = sum(m["role"] == "assistant" for m in request.messages)
        order = re.search(r"order (\d+)", system)
        if said == 0 and order:
            text = f"Hi, where is my order {order[1]}?"
        elif said == 0:
            text = "Hi!"
        else:
            text = "Thank you, that is all. [DONE]"
        return ChatResponse(text=text, model="scripted-user")

    async def aclose(self) -> None:
        return None
