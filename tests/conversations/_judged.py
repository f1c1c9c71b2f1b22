"""An assistant for the transcript judges' tests, and a scripted judge that reads the numbered
transcript it is sent (so the turn it names comes from the numbering the judge saw)."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.openai_server import Reply

from aieval.core import Turn

ROLE = "a support agent for orders"


def assistant(turns: tuple[Turn, ...]) -> str:
    """Greets the user by name, then answers about the order; on order 2 it forgets the
    user's name from turn 1 and asks for it again."""
    said = sum(1 for t in turns if t.role == "assistant")
    if said == 0:
        return "Nice to meet you, Ada."
    if "order 2" in turns[-1].content:
        return "I can check order 2. What is your name?"
    return "Ada, your order has shipped."


def rows() -> list[dict[str, Any]]:
    return [
        {
            "id": f"order-{n}",
            "goal": f"learn where order {n} is",
            "user_turns": ["My name is Ada.", f"Where is order {n}?"],
        }
        for n in (1, 2, 3)
    ]


_LINE = re.compile(r"^\[(\d+)\] (user|assistant|tool): (.*)$")


def judge(body: Any) -> Reply:
    """Scores knowledge retention (a later assistant turn asking for the name the user gave)
    and role adherence (an assistant turn writing poems); answers knowledge retention on
    order 3 in prose."""
    text = body["messages"][1]["content"]
    if "order 3" in text and "keep what the user told it" in text:
        return Reply("The assistant did well, I would say 9 out of 10.")
    turns = [m.groups() for line in text.splitlines() if (m := _LINE.match(line))]
    failed: list[int] = []
    if "keep what the user told it" in text:
        told = any(role == "user" and "My name is" in said for _, role, said in turns)
        failed = [
            int(n)
            for n, role, said in turns
            if told and role == "assistant" and "What is your name?" in said
        ]
        reason = "asks again for the name the user gave" if failed else "keeps the name"
    else:
        failed = [int(n) for n, role, said in turns if role == "assistant" and "poem" in said]
        reason = "leaves its role" if failed else "stays in its role"
    verdict = {"score": 2 if failed else 10, "reason": reason, "turns": failed}
    return Reply(json.dumps(verdict))
