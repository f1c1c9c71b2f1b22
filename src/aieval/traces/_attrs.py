"""The span attributes the mapping reads: GenAI semantic conventions and OpenInference."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal

from aieval.core import count_out_of_range

__all__ = [
    "Role",
    "agent_name",
    "cost",
    "error_type",
    "handoff_target",
    "input_value",
    "model",
    "names_agent",
    "output_text",
    "requested_calls",
    "role",
    "tokens",
    "tool_call",
]

Role = Literal["agent", "tool", "llm", "chain", "other"]

_GENAI_ROLES: dict[str, Role] = {
    "invoke_agent": "agent",
    # a workflow groups agent invocations (semantic conventions 1.37+): a container, not a step
    "invoke_workflow": "chain",
    "create_agent": "other",
    "execute_tool": "tool",
    # the OpenTelemetry bridge of the OpenAI Agents SDK names its handoff spans so
    "agent_handoff": "tool",
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "embeddings": "other",
}
_OPENINFERENCE_ROLES: dict[str, Role] = {
    "AGENT": "agent",
    "TOOL": "tool",
    "LLM": "llm",
    "CHAIN": "chain",
}


def role(attrs: Mapping[str, Any]) -> Role | None:
    """What a span is to the run model; ``None``: a span of no known GenAI shape."""
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str) and op in _GENAI_ROLES:
        return _GENAI_ROLES[op]
    kind = attrs.get("openinference.span.kind")
    if isinstance(kind, str):
        return _OPENINFERENCE_ROLES.get(kind.upper(), "other")
    return None


_AGENT_NAMES = ("gen_ai.agent.name", "agent.name", "graph.node.name", "graph.node.id")


def names_agent(attrs: Mapping[str, Any]) -> bool:
    """Whether a span names its agent in an attribute."""
    return any(isinstance(attrs.get(k), str) and attrs[k] for k in _AGENT_NAMES)


#: OpenInference names the Agents SDK's handoff spans so (a TOOL span, not a tool call).
_HANDOFF = "handoff to "


def handoff_target(attrs: Mapping[str, Any], span_name: str) -> str | None:
    """The agent a handoff span passes control to (``""`` when it does not say); ``None``: the
    span is no handoff.

    Two shapes: the OpenTelemetry bridge's ``agent_handoff`` span (``gen_ai.handoff.to_agent``)
    and OpenInference's ``handoff to X`` TOOL span."""
    if attrs.get("gen_ai.operation.name") == "agent_handoff":
        target = attrs.get("gen_ai.handoff.to_agent")
        return target if isinstance(target, str) else ""
    if span_name.startswith(_HANDOFF):
        return span_name.removeprefix(_HANDOFF).strip()
    return None


def agent_name(attrs: Mapping[str, Any], span_name: str) -> str:
    for key in _AGENT_NAMES:
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return span_name.removeprefix("invoke_agent ").strip() or span_name


def model(attrs: Mapping[str, Any]) -> str | None:
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tokens(attrs: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """``(input, output)`` tokens of a model call, ``None`` when not recorded."""
    return (
        _first_int(
            attrs,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
        ),
        _first_int(
            attrs,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        ),
    )


def cost(attrs: Mapping[str, Any]) -> float | None:
    value = attrs.get("llm.cost.total", attrs.get("gen_ai.usage.cost"))
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def error_type(attrs: Mapping[str, Any]) -> str | None:
    value = attrs.get("error.type")
    return str(value) if value not in (None, "") else None


def input_value(attrs: Mapping[str, Any]) -> Any:
    for key in ("gen_ai.input.messages", "input.value", "gen_ai.prompt"):
        if attrs.get(key) is not None:
            return _maybe_json(attrs[key])
    return None


def records_content(attrs: Mapping[str, Any]) -> bool:
    """Whether a span records message content (an input or an output), in any convention."""
    return input_value(attrs) is not None or output_text(attrs) is not None


def output_text(attrs: Mapping[str, Any]) -> Any:
    """A span's output: the last output message's text, else ``output.value``."""
    messages = attrs.get("gen_ai.output.messages")
    if messages is not None:
        text = _message_text(_maybe_json(messages))
        if text is not None:
            return text
    content = _openinference_output(attrs)
    if content is not None:
        return content
    value = attrs.get("output.value", attrs.get("gen_ai.completion"))
    return _maybe_json(value) if value is not None else None


def tool_call(attrs: Mapping[str, Any], span_name: str) -> dict[str, Any]:
    """An executed tool call: ``id``, ``name``, ``arguments``, ``result`` (those recorded)."""
    name = attrs.get("gen_ai.tool.name", attrs.get("tool.name"))
    if not isinstance(name, str) or not name:
        name = span_name.removeprefix("execute_tool ").strip() or span_name
    call: dict[str, Any] = {"name": name}
    call_id = attrs.get("gen_ai.tool.call.id", attrs.get("tool_call.id"))
    if call_id is not None:
        call["id"] = str(call_id)
    arguments = attrs.get("gen_ai.tool.call.arguments", attrs.get("tool_call.function.arguments"))
    if arguments is None and "openinference.span.kind" in attrs:
        arguments = attrs.get("input.value")
    if arguments is not None:
        call["arguments"] = arguments
    result = attrs.get("gen_ai.tool.call.result")
    if result is None and "openinference.span.kind" in attrs:
        result = attrs.get("output.value")
    if result is not None:
        call["result"] = result
    return call


def requested_calls(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Tool calls a model call asked for (GenAI output messages or OpenInference's)."""
    found: list[dict[str, Any]] = []
    messages = _maybe_json(attrs.get("gen_ai.output.messages"))
    if isinstance(messages, list):
        for message in messages:
            for part in message.get("parts", []) if isinstance(message, Mapping) else []:
                if isinstance(part, Mapping) and part.get("type") == "tool_call":
                    call = {"name": str(part.get("name", "")), "arguments": part.get("arguments")}
                    if part.get("id") is not None:
                        call["id"] = str(part["id"])
                    found.append(call)
    index = 0
    while True:
        prefix = f"llm.output_messages.0.message.tool_calls.{index}.tool_call."
        name = attrs.get(prefix + "function.name")
        if name is None:
            break
        call = {"name": str(name), "arguments": attrs.get(prefix + "function.arguments")}
        if attrs.get(prefix + "id") is not None:
            call["id"] = str(attrs[prefix + "id"])
        found.append(call)
        index += 1
    return found


def _openinference_output(attrs: Mapping[str, Any]) -> Any:
    index, last = 0, None
    while f"llm.output_messages.{index}.message.role" in attrs:
        content = attrs.get(f"llm.output_messages.{index}.message.content")
        last = content if content is not None else last
        index += 1
    return last


def _message_text(messages: Any) -> Any:
    if not isinstance(messages, list) or not messages:
        return messages if isinstance(messages, str) else None
    last = messages[-1]
    if not isinstance(last, Mapping):
        return None
    parts = last.get("parts")
    if isinstance(parts, list):
        texts = [
            str(p.get("content", ""))
            for p in parts
            if isinstance(p, Mapping) and p.get("type") == "text"
        ]
        return "".join(texts) if texts else None
    content = last.get("content")
    return content if content is not None else None


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # nested deeper than Python's parser goes
            return value
    return value


def _first_int(attrs: Mapping[str, Any], *keys: str) -> int | None:
    """The first of ``keys`` holding a count; one that is not a count the store can keep
    (negative, beyond 64 bits, not finite) reads as unreported."""
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value) or count_out_of_range(int(value)):
                return None
            return int(value)
    return None
