"""The ``conversation`` evaluator's settings, as an eval file writes them.

Everything here comes from the eval's author (the eval file, the command line, a Python call):
the simulated user's provider, and the Python tools, goal checks, checks and state function
by import reference. A scenario row only names checks and goal checks from these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aieval._keys import pydantic_problems
from aieval.conversations._engine import DEFAULT_MAX_TOOL_ROUNDS, GoalCheck
from aieval.conversations._tools import Tool
from aieval.conversations._user import PERSONA_PROMPT, SimulatedUser
from aieval.errors import ConfigError
from aieval.runner import import_reference

__all__ = ["ConversationSettings", "Hooks", "UserSettings", "parse_settings"]

#: what a turn check is given: the assistant turn, the turns before it, the scenario
TurnCheck = Callable[..., Any]
#: what a conversation check is given: the conversation, the scenario
ConversationCheck = Callable[..., Any]
#: the names of the built-in conversation checks
BUILTIN_CHECKS = ("goal_reached", "final_state")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UserSettings(_Strict):
    """The simulated user: a provider the author names (never a hosted default)."""

    provider: str = Field(description="provider name or preset: openai, vllm, ...")
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int | None = None
    prompt: str | None = Field(None, description="replaces the built-in persona prompt")
    timeout: float = Field(60.0, gt=0)
    retries: int = Field(3, ge=0, le=20)


class ConversationSettings(_Strict):
    """An eval file's ``conversation:`` mapping (every key optional)."""

    user: UserSettings | None = None
    tools: str | None = Field(None, description="'module:name' of a list of Tool")
    goal_checks: str | None = Field(None, description="'module:name' of {name: function}")
    turn_checks: str | None = Field(None, description="'module:name' of {name: function}")
    conversation_checks: str | None = Field(None, description="'module:name' of {name: function}")
    state: str | None = Field(
        None, description="'module:name' of fn(conversation, scenario): the final state"
    )
    max_tool_rounds: int = Field(DEFAULT_MAX_TOOL_ROUNDS, ge=0, le=100)
    builtin_checks: list[Literal["goal_reached", "final_state"]] = Field(
        default_factory=list,
        description="built-in conversation scores to add: goal_reached (scenarios with a "
        "goal check), final_state (scenarios with an expected_state)",
    )


@dataclass(frozen=True, slots=True)
class Hooks:
    """The author's Python parts, imported."""

    tools: tuple[Tool, ...] = ()
    goal_checks: Mapping[str, GoalCheck] | None = None
    turn_checks: Mapping[str, TurnCheck] | None = None
    conversation_checks: Mapping[str, ConversationCheck] | None = None
    state: Callable[..., Any] | None = None


def parse_settings(data: Any) -> ConversationSettings:
    """Validate ``conversation:``; a :class:`ConfigError` names each bad field."""
    if isinstance(data, ConversationSettings):
        return data
    try:
        return ConversationSettings.model_validate(data or {})
    except ValidationError as exc:
        problems = "; ".join(pydantic_problems(exc.errors(), ConversationSettings))
        raise ConfigError(f"conversation: {problems}") from None


def import_hooks(settings: ConversationSettings) -> Hooks:
    """Import the settings' references (each checked for its shape, named on error)."""
    tools = _imported(settings.tools, "conversation.tools")
    if tools is not None and (
        not isinstance(tools, Sequence) or not all(isinstance(t, Tool) for t in tools)
    ):
        raise ConfigError("conversation.tools: expected a list of aieval.conversations.Tool")
    turn = _functions(settings.turn_checks, "conversation.turn_checks")
    whole = _functions(settings.conversation_checks, "conversation.conversation_checks")
    for name in whole or {}:
        if name in BUILTIN_CHECKS:
            raise ConfigError(
                f"conversation.conversation_checks: {name!r} is a built-in check's name; "
                "rename yours"
            )
    for name in set(turn or {}) & set(whole or {}):
        raise ConfigError(
            f"conversation: {name!r} is both a turn check and a conversation check; "
            "a check's name says which it is: rename one"
        )
    state = _imported(settings.state, "conversation.state")
    if state is not None and not callable(state):
        raise ConfigError("conversation.state: expected a function (conversation, scenario)")
    return Hooks(
        tuple(tools or ()),
        _functions(settings.goal_checks, "conversation.goal_checks"),
        turn,
        whole,
        state,
    )


def simulated_user(settings: UserSettings, concurrency: int) -> SimulatedUser:
    """The simulated user on the provider the settings name (no response cache)."""
    from aieval.providers import build_provider

    provider = build_provider(
        settings.provider,
        base_url=settings.base_url,
        api_key_env=settings.api_key_env,
        retries=settings.retries,
        concurrency=concurrency,
        cache=False,
        timeout=settings.timeout,
    )
    return SimulatedUser(
        provider,
        settings.model,
        temperature=settings.temperature,
        seed=settings.seed,
        prompt=settings.prompt or PERSONA_PROMPT,
    )


def _imported(ref: str | None, field: str) -> Any:
    return None if ref is None else import_reference(ref, field)


def _functions(ref: str | None, field: str) -> Mapping[str, Callable[..., Any]] | None:
    found = _imported(ref, field)
    if found is None:
        return None
    if not isinstance(found, Mapping) or not all(
        isinstance(k, str) and callable(v) for k, v in found.items()
    ):
        raise ConfigError(f"{field}: expected a mapping of names to functions")
    return dict(found)
