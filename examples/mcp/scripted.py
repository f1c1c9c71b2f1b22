"""Scripted client models, so the example runs offline (no endpoint, no key).

Each reads the tool listing as a model does: it calls the tool whose *description* speaks of
what the user asks (the weather, the time, a sum), and answers with the tool's result; after a
tool error it tries once more. ``careless`` answers every third prompt without a tool. With
real models, name them instead: ``ModelSpec("openai", "gpt-4o-mini")``, or ``--model
openai:gpt-4o-mini`` on the command line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aieval.core import ToolCall
from aieval.providers import ChatRequest, ChatResponse

KEYWORDS = {"weather": "weather", "time": "time", "plus": "sum"}


class ScriptedModel:
    """A provider whose answers are computed from the request (an object with ``generate``)."""

    def __init__(self, name: str, careless: bool = False) -> None:
        self.name = name
        self.careless = careless
        self.prompts = 0

    async def generate(self, request: ChatRequest) -> ChatResponse:
        messages = request.messages
        last = messages[-1]
        if last["role"] == "tool":
            tried = sum(m["role"] == "tool" for m in messages)
            if str(last["content"]).startswith("error:") and tried < 2:
                asked = next(m for m in reversed(messages) if m.get("tool_calls"))
                call = asked["tool_calls"][0]["function"]
                return self.call(call["name"], call["arguments"], tried)
            return ChatResponse(text=f"Here is what I found: {last['content']}", model=self.name)
        self.prompts += 1
        if self.careless and self.prompts % 3 == 0:
            return ChatResponse(text="I am not sure.", model=self.name)
        prompt = str(last["content"])
        for keyword, word in KEYWORDS.items():
            if keyword in prompt.lower():
                for tool in request.params.get("tools", []):
                    function = tool["function"]
                    if word in (function.get("description") or "").lower():
                        return self.call(function["name"], json.dumps(_arguments(prompt)), 0)
        return ChatResponse(text="I cannot help with that.", model=self.name)

    def call(self, name: str, arguments: str, number: int) -> ChatResponse:
        return ChatResponse(
            text="", model=self.name, tool_calls=(ToolCall(f"call-{number}", name, arguments),)
        )

    async def aclose(self) -> None:
        return None


def _arguments(prompt: str) -> dict[str, Any]:
    numbers = [int(n) for n in re.findall(r"\d+", prompt)]
    if len(numbers) == 2:
        return {"a": numbers[0], "b": numbers[1]}
    return {"city": re.findall(r"[A-Z][a-z]+", prompt)[-1]}
