"""The provider protocol: one async ``generate`` that turns a chat request into a completion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from aieval.core import ToolCall

__all__ = ["ChatRequest", "ChatResponse", "Provider"]


@dataclass(slots=True, frozen=True)
class ChatRequest:
    """One chat-completion request.

    Attributes:
        model: the model name as the provider knows it.
        messages: OpenAI-style chat messages (``{"role", "content"}``).
        temperature: sampling temperature; ``None`` leaves the provider's default.
        max_tokens: completion length cap.
        response_schema: a JSON Schema the answer must follow, sent as structured output where
            the provider supports it.
        params: any other request fields, passed through (``top_p``, ``seed``, ``stop``, ...).
        cache_salt: distinguishes otherwise identical requests that must not share a cache
            entry (e.g. the i-th of ``samples`` judge calls).
        headers: HTTP headers for this request, sent over the provider's own (never in the
            body). Only providers that declare ``sends_headers = True`` are given any.
    """

    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = None
    max_tokens: int | None = None
    response_schema: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    cache_salt: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ChatResponse:
    """A completion and what it cost.

    Attributes:
        text: the assistant message content.
        model: the model that answered (as the provider reports it).
        input_tokens / output_tokens: usage, when the provider reports it.
        latency_s: wall time of the call; after retries, from the first attempt to the
            answer. A cache hit keeps the original call's (0 for an entry stored without it).
        retries: how many failed attempts preceded this one.
        cached: whether the answer came from the response cache.
        finish_reason: the provider's finish reason (``stop``, ``length``, ...).
        cost: the cost in USD when the provider reports it (``usage.cost``), else None.
        tool_calls: the tool calls the model asked for (``tools`` sent in ``params``), with
            their arguments verbatim; ``text`` is ``""`` when the model sent only calls.
    """

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float = 0.0
    retries: int = 0
    cached: bool = False
    finish_reason: str | None = None
    cost: float | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a :class:`ChatRequest`.

    A user's own gateway is one small class with a ``name`` and an async ``generate``; register
    it with :func:`aieval.providers.register_provider` or the ``aieval.providers`` entry point
    group. ``generate`` raises a subclass of :class:`aieval.errors.ProviderError` on failure so the
    retry layer can tell retryable errors (429, 5xx, timeouts) from final ones.

    A provider that sends :attr:`ChatRequest.headers` as HTTP headers says so with a class
    attribute ``sends_headers = True``; a run with headers refuses any provider without it,
    rather than letting them be dropped.
    """

    name: str

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Answer one request."""
        ...

    async def aclose(self) -> None:
        """Release connections; called once when a run ends."""
        ...
