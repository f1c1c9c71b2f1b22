"""A conversation as one typed record: its turns, where each came from, and how it ended.

A :class:`Conversation` is what a scenario produced (or a replay reproduced): every turn with its
role, content, tool calls and their results, usage, latency and ``source``. It round-trips
exactly through JSON (:meth:`Conversation.to_json`, :meth:`Conversation.from_json`), so a run
can keep it per sample (in the sample's ``extra``) and a later run can replay it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from aieval.core._target import Usage
from aieval.errors import ConversationError

__all__ = [
    "Conversation",
    "ConversationOutcome",
    "Role",
    "StopReason",
    "ToolCall",
    "Turn",
    "TurnSource",
]

Role = Literal["user", "assistant", "tool"]
#: where a turn came from: the scenario's script, the simulated user, a recorded conversation
#: (replay), or a live call of the target
TurnSource = Literal["scripted", "simulated", "replayed", "live"]
#: why a conversation ended: the user said it is done, the scenario's script ran out (and no
#: simulated user was given), the goal check passed, the turn limit, or a failure
StopReason = Literal["user_done", "script_end", "goal_reached", "max_turns", "failed"]

_ROLES = frozenset(get_args(Role))
_SOURCES = frozenset(get_args(TurnSource))
_STOPS = frozenset(get_args(StopReason))
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant turn.

    Attributes:
        id: the call's id, as the model gave it (tool turns answer it by this id).
        name: the tool's name.
        arguments: the arguments exactly as the model sent them (JSON text, kept verbatim).
        result: what the tool returned (the tool turn's content), ``None`` before it ran.
        error: why the tool failed (unknown tool, no recorded result, the function raised).
    """

    id: str
    name: str
    arguments: str
    result: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ToolCall:
        fields = _object(data, where)
        return cls(
            id=_text(fields, "id", where),
            name=_text(fields, "name", where),
            arguments=_text(fields, "arguments", where),
            result=_text(fields, "result", where, optional=True),
            error=_text(fields, "error", where, optional=True),
        )


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation.

    Attributes:
        role: ``user``, ``assistant`` or ``tool``.
        content: the message text (a tool turn: the tool's result).
        source: ``scripted``, ``simulated``, ``replayed`` or ``live``.
        tool_calls: an assistant turn's tool calls, with their results.
        tool_call_id: a tool turn answers this call of the assistant turn before it.
        usage: tokens and cost of the call that made this turn (``None``: no call was made).
        latency_s: wall time of that call.
    """

    role: Role
    content: str
    source: TurnSource
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    usage: Usage | None = None
    latency_s: float | None = None

    @property
    def cost(self) -> float | None:
        """The call's cost in USD, when known."""
        return None if self.usage is None else self.usage.cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": self.content,
            "source": self.source,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "usage": None if self.usage is None else _usage_dict(self.usage),
            "latency_s": self.latency_s,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Turn:
        fields = _object(data, where)
        role = _choice(fields, "role", _ROLES, where)
        source = _choice(fields, "source", _SOURCES, where)
        calls = fields.get("tool_calls", [])
        if not isinstance(calls, list):
            raise ConversationError(f"{where}.tool_calls: expected a list")
        usage = fields.get("usage")
        return cls(
            role=role,  # type: ignore[arg-type]  # checked against Role by _choice
            content=_text(fields, "content", where),
            source=source,  # type: ignore[arg-type]  # checked against TurnSource
            tool_calls=tuple(
                ToolCall.from_dict(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)
            ),
            tool_call_id=_text(fields, "tool_call_id", where, optional=True),
            usage=None if usage is None else _usage_of(usage, f"{where}.usage"),
            latency_s=_number(fields, "latency_s", where),
        )


@dataclass(frozen=True, slots=True)
class ConversationOutcome:
    """How a conversation ended.

    Attributes:
        stop_reason: the stop rule that ended it, or ``failed``.
        completed: whether it ended as the scenario meant (the user was done, the script ran
            out, or the goal check passed), not by the turn limit or a failure.
        failure: what failed (the target, the simulated user, a replay miss), with its message.
        failure_type: the failure's exception class (``ReplayMissError``, ``ProviderError``...).
    """

    stop_reason: StopReason
    completed: bool
    failure: str | None = None
    failure_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "stop_reason": self.stop_reason,
            "completed": self.completed,
            "failure": self.failure,
            "failure_type": self.failure_type,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ConversationOutcome:
        fields = _object(data, where)
        completed = fields.get("completed")
        if not isinstance(completed, bool):
            raise ConversationError(f"{where}.completed: expected true or false")
        return cls(
            stop_reason=_choice(fields, "stop_reason", _STOPS, where),  # type: ignore[arg-type]
            completed=completed,
            failure=_text(fields, "failure", where, optional=True),
            failure_type=_text(fields, "failure_type", where, optional=True),
        )


@dataclass(frozen=True, slots=True)
class Conversation:
    """One scenario's conversation, turn by turn.

    Attributes:
        scenario_id: the scenario's id (a replay is matched to its record by it and the epoch).
        epoch: which repetition of the scenario (0-based).
        turns: every turn, in order; a turn's number in messages is its 1-based position.
        outcome: how it ended.
        branched_at: in a branch replay, the number of the first assistant turn that differed
            from the record (the conversation continued live from there); else ``None``.
    """

    scenario_id: str
    epoch: int
    turns: tuple[Turn, ...]
    outcome: ConversationOutcome
    branched_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON values (what a sample's ``extra`` holds)."""
        return {
            "scenario_id": self.scenario_id,
            "epoch": self.epoch,
            "turns": [turn.to_dict() for turn in self.turns],
            "outcome": self.outcome.to_dict(),
            "branched_at": self.branched_at,
        }

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no spaces): the same record always gives the same text."""
        return _CANONICAL.encode(self.to_dict())

    def transcript(self) -> str:
        """What was said, as canonical JSON: each turn's role, content, tool calls (with their
        arguments and results) and tool-call id, without where the turn came from, its usage or
        its latency. Two conversations that said the same thing have the same transcript."""
        return _CANONICAL.encode(
            [
                {
                    "role": t.role,
                    "content": t.content,
                    "tool_calls": [c.to_dict() for c in t.tool_calls],
                    "tool_call_id": t.tool_call_id,
                }
                for t in self.turns
            ]
        )

    @classmethod
    def from_dict(cls, data: Any) -> Conversation:
        """The record :meth:`to_dict` made; a :class:`ConversationError` names a bad field."""
        fields = _object(data, "conversation")
        scenario = fields.get("scenario_id")
        if not isinstance(scenario, str) or not scenario:
            raise ConversationError("conversation.scenario_id: expected a non-empty string")
        where = f"scenario {scenario!r}"
        epoch = fields.get("epoch")
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
            raise ConversationError(f"{where}: epoch: expected a whole number >= 0")
        turns = fields.get("turns")
        if not isinstance(turns, list):
            raise ConversationError(f"{where}: turns: expected a list")
        branched = fields.get("branched_at")
        if branched is not None and (not isinstance(branched, int) or isinstance(branched, bool)):
            raise ConversationError(f"{where}: branched_at: expected a turn number or null")
        return cls(
            scenario_id=scenario,
            epoch=epoch,
            turns=tuple(Turn.from_dict(t, f"{where}, turn {i}") for i, t in enumerate(turns, 1)),
            outcome=ConversationOutcome.from_dict(fields.get("outcome"), f"{where}: outcome"),
            branched_at=branched,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Conversation:
        """The record :meth:`to_json` wrote."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConversationError(f"a conversation record is not JSON: {exc}") from None
        return cls.from_dict(data)


def _usage_dict(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost": usage.cost,
        "retries": usage.retries,
    }


def _usage_of(data: Any, where: str) -> Usage:
    fields = _object(data, where)
    tokens = [fields.get("input_tokens"), fields.get("output_tokens")]
    for name, value in zip(("input_tokens", "output_tokens"), tokens, strict=True):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ConversationError(f"{where}.{name}: expected a whole number or null")
    retries = fields.get("retries", 0)
    if not isinstance(retries, int) or isinstance(retries, bool):
        raise ConversationError(f"{where}.retries: expected a whole number")
    return Usage(tokens[0], tokens[1], _number(fields, "cost", where), retries)


def _object(data: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ConversationError(f"{where}: expected an object, got {type(data).__name__}")
    return data


def _text(fields: Mapping[str, Any], name: str, where: str, *, optional: bool = False) -> Any:
    value = fields.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ConversationError(f"{where}.{name}: expected a string")
    return value


def _choice(fields: Mapping[str, Any], name: str, allowed: frozenset[str], where: str) -> str:
    value = fields.get(name)
    if value not in allowed:
        raise ConversationError(
            f"{where}.{name}: {value!r} is not one of {', '.join(sorted(allowed))}"
        )
    return str(value)


def _number(fields: Mapping[str, Any], name: str, where: str) -> float | None:
    value = fields.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConversationError(f"{where}.{name}: expected a finite number or null")
    return float(value)
