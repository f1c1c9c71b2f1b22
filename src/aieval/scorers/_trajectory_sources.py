"""Where a sample's tool calls come from: a recorded output, a trace's run, a conversation.

Thin adapters to :class:`aieval.core.ToolUse`, one matcher for all (:mod:`._trajectory_match`):

- a **recorded output**: an assistant message (or its JSON) with OpenAI ``tool_calls``, a list
  of such calls, or of ``{"name", "arguments"}`` objects, or a list of chat messages (every
  message's calls, in order, each call's ``batch`` its message's index); a call's own
  ``error`` field (text) is the tool's failure;
- a **trace** (a workflow run's steps): every step's ``metadata.tool_calls`` (the failed
  span's error is the call's ``error``), in step order, ``batch`` the step's index;
- a **conversation**: every assistant turn's calls, in order, with ``ToolCall.error``,
  ``batch`` the turn's index.

Calls of one batch were issued together (parallel calls); a flat list of calls has no
batches.

The runner hands workflows and conversations to scorers as ``output`` (objects of upper
layers): they are read by their shape (``steps``; ``conversation`` and ``scenario``), never
imported here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from aieval.core import Conversation, ToolUse
from aieval.errors import ConfigError

__all__ = ["answered_in_prose", "called_uses", "expected_uses", "parse_uses"]


def parse_uses(value: Any, where: str) -> tuple[ToolUse, ...]:
    """Calls in any recorded form (see the module); ``ConfigError`` naming ``where`` when the
    value holds no readable list of calls. Unreadable arguments are kept as
    ``argument_error``, never raised."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError as exc:
            raise ConfigError(f"{where}: the text is not JSON ({exc})") from None
    if isinstance(value, Mapping):
        value = value.get("tool_calls") or []
    if not isinstance(value, Iterable) or isinstance(value, str | bytes):
        raise ConfigError(f"{where}: expected a list of tool calls, got {type(value).__name__}")
    items = list(value)
    if any(isinstance(item, Mapping) and "role" in item for item in items):
        return _from_messages(items, where)
    return tuple(_use(item, f"{where}[{i}]") for i, item in enumerate(items))


def _from_messages(messages: list[Any], where: str) -> tuple[ToolUse, ...]:
    """The calls of a list of chat messages: each assistant message's ``tool_calls``, in order,
    each call's ``batch`` its message's index (one message's calls are parallel)."""
    uses: list[ToolUse] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ConfigError(f"{where}[{i}]: expected a chat message object")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ConfigError(f"{where}[{i}].tool_calls: expected a list")
        uses += [
            replace(_use(call, f"{where}[{i}].tool_calls[{j}]"), batch=i)
            for j, call in enumerate(calls)
        ]
    return tuple(uses)


def expected_uses(value: Any, where: str) -> tuple[ToolUse, ...]:
    """The expected calls: as :func:`parse_uses`, a bare name standing for a call of that tool
    whose arguments are not compared; a call without ``arguments`` is not compared either."""
    if isinstance(value, Mapping) and "tool_calls" not in value:
        value = [value]
    if isinstance(value, list | tuple):
        value = [{"name": v, "arguments": _ANY} if isinstance(v, str) else v for v in value]
        value = [_with_any(v) for v in value]
    uses = parse_uses(value, where)
    for i, use in enumerate(uses):
        if use.argument_error is not None:  # the expectation's own fault: never a silent miss
            raise ConfigError(f"{where}[{i}].arguments: {use.argument_error}")
    return uses


#: stands for "any arguments" in an expected call (not stored: a ToolUse keeps ``None``)
_ANY = object()


def _with_any(item: Any) -> Any:
    if not isinstance(item, Mapping):
        return item
    holder = item.get("function", item)
    if isinstance(holder, Mapping) and "arguments" not in holder and "args" not in holder:
        return {**item, "arguments": _ANY} if holder is item else item
    return item


def _use(item: Any, where: str) -> ToolUse:
    if isinstance(item, ToolUse):
        return item
    if isinstance(item, str) and item:  # a run log's bare tool name: the arguments are unknown
        return ToolUse(item, None, None, "arguments not recorded")
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: expected a tool call object, got {type(item).__name__}")
    function = item.get("function", item)
    if not isinstance(function, Mapping):
        raise ConfigError(f"{where}.function: expected an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: a tool call needs a name")
    raw = function.get("arguments", function.get("args", {}))
    error = item.get("error")
    error = error if isinstance(error, str) and error else None
    if raw is _ANY:
        return ToolUse(name, None, error)
    arguments, problem = _arguments(raw)
    return ToolUse(name, arguments, error, problem)


def _arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None:
        return {}, None
    if not isinstance(raw, str):
        return None, f"arguments are a {type(raw).__name__}, not JSON text"
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return None, f"arguments are not valid JSON ({exc})"
    if not isinstance(parsed, dict):
        return None, "arguments are JSON but not an object"
    return parsed, None


def called_uses(prediction: Any, output: Any) -> tuple[ToolUse, ...]:
    """The calls a sample made: from a conversation or a trace in ``output``, else from the
    recorded ``output`` (a message or list) or the ``prediction`` text."""
    conversation = output if isinstance(output, Conversation) else None
    held = getattr(output, "conversation", None)
    if conversation is None and isinstance(held, Conversation):
        conversation = held
    if conversation is not None:
        return tuple(
            _conversation_use(call, batch)
            for batch, turn in enumerate(conversation.turns)
            if turn.role == "assistant"
            for call in turn.tool_calls
        )
    steps = getattr(output, "steps", None)
    if isinstance(steps, list | tuple) and not isinstance(output, Mapping):
        return tuple(
            replace(_use(call, f"trace tool calls[{i}]"), batch=step)
            for i, (step, call) in enumerate(_trace_calls(steps))
        )
    if answered_in_prose(prediction, output):
        return ()
    try:
        if isinstance(output, Mapping | list | tuple):
            return parse_uses(output, "output tool calls")
        return parse_uses(prediction if prediction is not None else [], "output tool calls")
    except ConfigError as exc:
        raise ConfigError(
            f"{exc}; the output must be the assistant message with tool_calls (or a list of "
            "calls or messages) as JSON, or the sample a trace or a conversation"
        ) from None


def answered_in_prose(prediction: Any, output: Any) -> bool:
    """Whether the sample's answer is plain text (an agent that answered in prose made no
    calls): a recorded text that is not JSON and does not start as JSON does (``{``, ``[``;
    such text is malformed tool calls, an error)."""
    if isinstance(output, Mapping | list | tuple | Conversation) or hasattr(output, "steps"):
        return False
    if isinstance(getattr(output, "conversation", None), Conversation):
        return False
    if not isinstance(prediction, str) or prediction.lstrip()[:1] in ("", "{", "["):
        return False
    try:
        json.loads(prediction)
    except ValueError:
        return True
    return False


def delegated_names(output: Any) -> list[str]:
    """The names of the tools that agents used as a tool called inside a trace (none for
    anything else): out of the trajectory, yet a forbidden one among them still counts."""
    steps = getattr(output, "steps", None)
    if not isinstance(steps, list | tuple) or isinstance(output, Mapping):
        return []
    try:
        calls = [call for _, call in _trace_calls(steps, delegated=True)]
        return [use.name for use in parse_uses(calls, "calls")]
    except ConfigError:
        return []


def _conversation_use(call: Any, batch: int) -> ToolUse:
    arguments, problem = _arguments(call.arguments)
    return ToolUse(call.name, arguments, call.error, problem, batch)


def _trace_calls(steps: Iterable[Any], *, delegated: bool = False) -> list[tuple[int, Any]]:
    """The recorded calls (``metadata.tool_calls`` or the outputs') of the steps of the run's
    trajectory, in order, each with its step's index (one step's calls are parallel): with
    ``delegated``, those of the agents used as a tool instead.

    As ``aieval.workflows.trajectory_calls``: an agent another one used as a tool
    (``delegated_by``) is one call of its caller; the calls it made inside are its own.
    """
    calls: list[tuple[int, Any]] = []
    for index, step in enumerate(steps):
        metadata = getattr(step, "metadata", None)
        inside = isinstance(metadata, Mapping) and bool(metadata.get("delegated_by"))
        if inside != delegated:
            continue
        for holder in (metadata, getattr(step, "outputs", None)):
            found = holder.get("tool_calls") if isinstance(holder, Mapping) else None
            if isinstance(found, list):
                calls += [(index, call) for call in found]
    return calls
