"""A scripted client model for the MCP tests, answering on the loopback OpenAI server.

It picks a tool the way a model reads a listing: by the tool's *description* (a prompt about
the weather calls the tool whose description speaks of the weather), so a server whose
descriptions are wrong makes it call the wrong tool. ``CALL name {json}`` in a prompt calls that
tool by name. After a tool error it calls the same tool again (at most 3 calls a task), then
answers with the last result. ``model-c`` is flaky: every third prompt it answers without a
tool (fails); the others never are.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from tests.support.openai_server import Reply

MODELS = ("model-a", "model-b", "model-c")
#: prompt keyword -> the word a tool's description must hold
KEYWORDS = {"weather": "weather", "time": "time", "plus": "sum"}
TASKS = [
    {
        "id": "weather",
        "prompt": "What is the weather in Paris?",
        "expect_tools": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        "answer_contains": "sunny",
    },
    {
        "id": "time",
        "prompt": "What time is it in Tokyo?",
        "expect_tools": [{"name": "get_time", "arguments": {"city": "Tokyo"}}],
        "answer_contains": "12:00",
    },
    {
        "id": "sum",
        "prompt": "What is 2 plus 3?",
        "expect_tools": [{"name": "add", "arguments": {"a": 2, "b": 3}}],
        "answer_matches": r"\b5\b",
    },
]


class ScriptedModel:
    """``responder(body)`` for :class:`OpenAIServer` (counts prompts per model)."""

    def __init__(self) -> None:
        self.prompts: Counter[str] = Counter()

    def __call__(self, body: Any) -> Reply:
        model = str(body.get("model"))
        messages = body["messages"]
        last = messages[-1]
        if last["role"] == "tool":
            return self.after_tool(messages)
        prompt = str(last["content"])
        self.prompts[model] += 1
        if model == "model-c" and self.prompts[model] % 3 == 0:
            return Reply("I do not know.")
        call = self.pick(prompt, body.get("tools") or [])
        if call is None:
            return Reply("No tool fits.")
        return Reply("", tool_calls=(("call-1", call[0], json.dumps(call[1])),))

    def after_tool(self, messages: list[dict[str, Any]]) -> Reply:
        content = str(messages[-1]["content"])
        results = sum(m["role"] == "tool" for m in messages)
        if content.startswith("error:") and results < 3:
            previous = next(m for m in reversed(messages) if m.get("tool_calls"))
            call = previous["tool_calls"][0]["function"]
            return Reply("", tool_calls=((f"call-{results + 1}", call["name"], call["arguments"]),))
        return Reply(f"Here is what I found: {content}")

    def pick(self, prompt: str, tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
        named = re.match(r"CALL (\w+) ?(.*)$", prompt)
        if named:
            return named.group(1), json.loads(named.group(2) or "{}")
        for keyword, word in KEYWORDS.items():
            if keyword not in prompt.lower():
                continue
            for tool in tools:
                function = tool["function"]
                if word in (function.get("description") or "").lower():
                    return function["name"], arguments(prompt)
        return None


def arguments(prompt: str) -> dict[str, Any]:
    numbers = [int(n) for n in re.findall(r"\d+", prompt)]
    if len(numbers) == 2:
        return {"a": numbers[0], "b": numbers[1]}
    return {"city": re.findall(r"[A-Z][a-z]+", prompt)[-1]}
