"""The assistant under test and the simulated user's model as an eval author writes them with
the real ``openai`` package (extra ``openai-sdk``), against the scripted loopback model.

An eval file names them as Python (``conversation.target: tests.conversations._sdk:assistant``,
``user: {python: tests.conversations._sdk:SDKUser}``); the test points them at its server with
:func:`serve`. Every request goes through ``openai.AsyncOpenAI`` (its HTTP client, request
building and response parsing), never through aieval's own provider layer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import openai
import pytest

from aieval.conversations import TargetReply, ToolSpec, chat_messages
from aieval.core import ToolCall, Turn, Usage
from aieval.providers import ChatRequest, ChatResponse

#: the loopback server's ``/v1`` URL (set by :func:`serve`)
BASE_URL = ""


def serve(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    """Point the assistant and the simulated user at ``base_url`` for this test."""
    monkeypatch.setattr(f"{__name__}.BASE_URL", base_url)


class _Client:
    """One ``AsyncOpenAI`` per event loop (a run's loop; the client's connections live in it),
    closed by :meth:`aclose`."""

    def __init__(self) -> None:
        self.made: dict[int, openai.AsyncOpenAI] = {}

    def get(self) -> openai.AsyncOpenAI:
        loop = id(asyncio.get_running_loop())
        if loop not in self.made:
            # no retries: a failed call shows as it is, as the fake answers at once
            self.made[loop] = openai.AsyncOpenAI(
                base_url=BASE_URL, api_key="sk-loopback", max_retries=0, timeout=10.0
            )
        return self.made[loop]

    async def aclose(self) -> None:
        client = self.made.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.close()


async def _complete(
    client: _Client, model: str, messages: list[dict[str, Any]], **more: Any
) -> tuple[Any, float]:
    started = time.perf_counter()
    completion = await client.get().chat.completions.create(
        model=model, messages=messages, temperature=0, **more
    )
    return completion, time.perf_counter() - started


class SDKAssistant:
    """The assistant under test: the whole conversation and the tools sent on every turn."""

    def __init__(self, model: str = "target-model") -> None:
        self.model = model
        self.client = _Client()

    async def __call__(self, turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply:
        more: dict[str, Any] = {"tools": [t.to_openai() for t in tools]} if tools else {}
        completion, took = await _complete(self.client, self.model, chat_messages(turns), **more)
        message = completion.choices[0].message
        calls = tuple(
            ToolCall(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()
        )
        usage = completion.usage
        return TargetReply(
            message.content or "",
            calls,
            Usage(usage.prompt_tokens, usage.completion_tokens, None, 0),
            took,
        )

    async def aclose(self) -> None:
        await self.client.aclose()


assistant = SDKAssistant()


class SDKUser:
    """The simulated user's model: a provider calling the endpoint with the openai client."""

    name = "openai-sdk"

    def __init__(self) -> None:
        self.client = _Client()

    async def generate(self, request: ChatRequest) -> ChatResponse:
        more = {"seed": request.params["seed"]} if "seed" in request.params else {}
        completion, took = await _complete(
            self.client, request.model, list(request.messages), **more
        )
        usage = completion.usage
        return ChatResponse(
            text=completion.choices[0].message.content or "",
            model=completion.model,
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            latency_s=took,
        )

    async def aclose(self) -> None:
        await self.client.aclose()


def through_the_sdk(requests: Sequence[Any]) -> bool:
    """Whether every request the server saw came from the openai client (its User-Agent)."""
    return bool(requests) and all(
        r.headers.get("User-Agent", "").startswith("AsyncOpenAI/Python") for r in requests
    )
