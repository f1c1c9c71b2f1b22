"""The conversation's target: an OpenAI-compatible chat endpoint or a Python callable.

Both answer the conversation so far (every turn, tool turns included) and may ask for tool
calls; the engine runs the tools and asks again.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from aieval.core import ToolCall, Turn, Usage
from aieval.errors import ConfigError
from aieval.providers import ChatRequest, Provider

__all__ = [
    "CallableTarget",
    "ChatTarget",
    "ConversationTarget",
    "TargetReply",
    "ToolSpec",
    "as_target",
    "chat_messages",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the target sees it: name, description and JSON Schema of its arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters) or {"type": "object", "properties": {}},
            },
        }


@dataclass(frozen=True, slots=True)
class TargetReply:
    """The target's answer: its text, the tool calls it asks for, and what the call cost."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    latency_s: float | None = None


@runtime_checkable
class ConversationTarget(Protocol):
    """Answers a conversation so far."""

    async def respond(self, turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply:
        """The next assistant message for ``turns``, offered ``tools``."""
        ...


def chat_messages(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The turns as OpenAI chat messages (tool calls and tool results included)."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": turn.tool_call_id, "content": turn.content}
            )
        elif turn.role == "assistant" and turn.tool_calls:
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        }
                        for c in turn.tool_calls
                    ],
                }
            )
        else:
            messages.append({"role": turn.role, "content": turn.content})
    return messages


class ChatTarget:
    """An OpenAI-compatible chat endpoint through a provider: the whole history and the tools
    are sent on every turn.

    Args:
        provider: any :class:`~aieval.providers.Provider` that reports tool calls
            (:class:`~aieval.providers.OpenAIProvider`, or one from ``build_provider``).
        model: the model name.
        system: a system message sent first, when given.
        temperature: sampling temperature (``None``: the endpoint's default).
        params: other request fields (``seed``, ``max_tokens`` go here too).
    """

    def __init__(
        self,
        provider: Provider,
        model: str,
        *,
        system: str | None = None,
        temperature: float | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if "tools" in (params or {}):
            raise ConfigError("ChatTarget params.tools: the scenario's tools are sent; drop it")
        self.provider, self.model, self.system = provider, model, system
        self.temperature = temperature
        self.params = dict(params or {})

    async def respond(self, turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply:
        messages = chat_messages(turns)
        if self.system is not None:
            messages.insert(0, {"role": "system", "content": self.system})
        params = dict(self.params)
        if tools:
            params["tools"] = [tool.to_openai() for tool in tools]
        response = await self.provider.generate(
            ChatRequest(self.model, messages, temperature=self.temperature, params=params)
        )
        return TargetReply(
            response.text,
            response.tool_calls,
            Usage(response.input_tokens, response.output_tokens, response.cost, response.retries),
            response.latency_s,
        )


#: a Python target: takes the turns so far (and the tools offered), returns the answer's text
#: or a :class:`TargetReply`; may be async
TargetFunction = Callable[..., "str | TargetReply | Awaitable[str | TargetReply]"]


class CallableTarget:
    """A Python function (sync or async) as the target: ``fn(turns)`` or ``fn(turns, tools)``,
    returning the answer's text or a :class:`TargetReply`."""

    def __init__(self, fn: TargetFunction) -> None:
        self.fn = fn
        try:
            self._takes_tools = len(inspect.signature(fn).parameters) >= 2
        except (TypeError, ValueError):
            self._takes_tools = False

    async def respond(self, turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply:
        started = time.perf_counter()
        answer = self.fn(tuple(turns), tuple(tools)) if self._takes_tools else self.fn(tuple(turns))
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, TargetReply):
            return answer
        if not isinstance(answer, str):
            raise TypeError(
                f"the target function returned {type(answer).__name__}; return a str or a "
                "TargetReply"
            )
        return TargetReply(answer, latency_s=time.perf_counter() - started)


def as_target(target: ConversationTarget | TargetFunction) -> ConversationTarget:
    """``target`` itself, or a function wrapped as a :class:`CallableTarget`."""
    if isinstance(target, ConversationTarget):
        return target
    if callable(target):
        return CallableTarget(target)
    raise ConfigError(
        f"a conversation target is a ChatTarget, an object with respond(), or a function; got "
        f"{type(target).__name__}"
    )
