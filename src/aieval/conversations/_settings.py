"""The ``conversation`` evaluator's settings, as an eval file writes them.

Everything here comes from the eval's author (the eval file, the command line, a Python call):
the simulated user's provider, and the Python tools, goal checks, checks, state function and
environment by import reference. A scenario row only names checks and goal checks from these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aieval._keys import pydantic_problems
from aieval.conversations._engine import DEFAULT_MAX_TOOL_ROUNDS, GoalCheck
from aieval.conversations._environment import EnvironmentFactory
from aieval.conversations._tools import Tool, takes_environment
from aieval.conversations._user import PERSONA_PROMPT, SimulatedUser
from aieval.errors import ConfigError
from aieval.runner import import_file, import_reference

__all__ = ["ConversationSettings", "Hooks", "JudgeSettings", "UserSettings", "parse_settings"]

#: what a turn check is given: the assistant turn, the turns before it, the scenario
TurnCheck = Callable[..., Any]
#: what a conversation check is given: the conversation, the scenario
ConversationCheck = Callable[..., Any]
#: the names of the built-in conversation checks
BUILTIN_CHECKS = (
    "goal_reached",
    "final_state",
    "role_adherence",
    "knowledge_retention",
    "user_frustration",
)
#: a built-in check's name, as ``builtin_checks`` lists it
BuiltinCheck = Literal[
    "goal_reached", "final_state", "role_adherence", "knowledge_retention", "user_frustration"
]
#: the built-in checks that are judges over the transcript (each needs ``judge:``)
JudgeCheck = Literal["role_adherence", "knowledge_retention", "user_frustration"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UserSettings(_Strict):
    """The simulated user: a provider the author names (never a hosted default), or the
    author's own Python stand-in for its model (``python:``)."""

    provider: str | None = Field(None, description="provider name or preset: openai, vllm, ...")
    python: str | None = Field(
        None,
        description="'module:name' or 'file.py:name' of the author's provider (an object, or a "
        "class made with no arguments, with async generate(ChatRequest) -> ChatResponse): "
        "a scripted or in-process model, instead of provider:",
    )
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int | None = None
    prompt: str | None = Field(None, description="replaces the built-in persona prompt")
    timeout: float = Field(60.0, gt=0)
    retries: int = Field(3, ge=0, le=20)

    @model_validator(mode="after")
    def _one_model(self) -> UserSettings:
        if (self.provider is None) == (self.python is None):
            raise ValueError("give the simulated user's provider: (with model:) or python:, once")
        if self.provider is not None and self.model is None:
            raise ValueError(f"provider {self.provider!r} needs model:")
        return self


class JudgeSettings(_Strict):
    """The transcript judges' model: a provider and model the author names (never a default)."""

    provider: str = Field(description="provider name or preset: openai, vllm, ...")
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    samples: int = Field(1, ge=1, le=20, description="verdicts per conversation; the median")
    max_tokens: int = Field(512, ge=16, le=8192)
    role: str | None = Field(
        None, description="the assistant's role, which role_adherence judges against"
    )
    rubrics: dict[JudgeCheck, str] = Field(
        default_factory=dict, description="a judge's rubric instead of its built-in one"
    )


class ConversationSettings(_Strict):
    """An eval file's ``conversation:`` mapping (every key optional)."""

    target: str | None = Field(
        None,
        description="'module:name' or 'file.py:name' of the assistant under test, a Python "
        "function of the turns (instead of the eval's target:)",
    )
    user: UserSettings | None = None
    tools: str | None = Field(None, description="'module:name' of a list of Tool")
    goal_checks: str | None = Field(None, description="'module:name' of {name: function}")
    turn_checks: str | None = Field(None, description="'module:name' of {name: function}")
    conversation_checks: str | None = Field(None, description="'module:name' of {name: function}")
    state: str | None = Field(
        None, description="'module:name' of fn(conversation, scenario): the final state"
    )
    environment: str | None = Field(
        None,
        description="'module:name' of fn(scenario) -> Environment (an Environment class "
        "works): the state the tools share, one per conversation; its snapshot is the final "
        "state",
    )
    state_check: str | None = Field(
        None,
        description="'module:name' of fn(state) -> bool | 0..1 | Score: the author's check "
        "over the final state, which final_state requires beside expected_state",
    )
    max_tool_rounds: int = Field(DEFAULT_MAX_TOOL_ROUNDS, ge=0, le=100)
    builtin_checks: list[BuiltinCheck] = Field(
        default_factory=list,
        description="built-in conversation scores to add: goal_reached (scenarios with a "
        "goal check), final_state (scenarios with an expected_state), and the judges over the "
        "transcript role_adherence, knowledge_retention, user_frustration (with judge:)",
    )
    judge: JudgeSettings | None = Field(
        None, description="the model of the judges over the transcript"
    )

    @model_validator(mode="after")
    def _judged(self) -> ConversationSettings:
        asked = [c for c in self.builtin_checks if c in get_args(JudgeCheck)]
        if asked and self.judge is None:
            raise ValueError(
                f"builtin_checks {', '.join(asked)} are judges: give judge: (provider:, model:)"
            )
        if "role_adherence" in asked and not (self.judge and (self.judge.role or "").strip()):
            raise ValueError("builtin_checks role_adherence needs judge.role: the assistant's role")
        return self


@dataclass(frozen=True, slots=True)
class Hooks:
    """The author's Python parts, imported."""

    tools: tuple[Tool, ...] = ()
    goal_checks: Mapping[str, GoalCheck] | None = None
    turn_checks: Mapping[str, TurnCheck] | None = None
    conversation_checks: Mapping[str, ConversationCheck] | None = None
    state: Callable[..., Any] | None = None
    target: Callable[..., Any] | None = None
    environment: EnvironmentFactory | None = None
    state_check: Callable[..., Any] | None = None


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
    environment = _imported(settings.environment, "conversation.environment")
    if environment is not None and not callable(environment):
        raise ConfigError("conversation.environment: expected fn(scenario) -> Environment")
    if environment is not None and state is not None:
        raise ConfigError(
            "conversation: give the final state once, environment: (its snapshot) or state:"
        )
    needing = [t.name for t in tools or () if takes_environment(t.function)]
    if needing and environment is None:
        raise ConfigError(
            f"conversation.tools: {', '.join(map(repr, needing))} take the conversation's "
            "environment: give conversation.environment (fn(scenario) -> Environment)"
        )
    state_check = _imported(settings.state_check, "conversation.state_check")
    if state_check is not None and not callable(state_check):
        raise ConfigError("conversation.state_check: expected a function fn(state)")
    target = _imported(settings.target, "conversation.target")
    if target is not None and not callable(target):
        raise ConfigError("conversation.target: expected a function fn(turns) or fn(turns, tools)")
    return Hooks(
        tuple(tools or ()),
        _functions(settings.goal_checks, "conversation.goal_checks"),
        turn,
        whole,
        state,
        target,
        environment,
        state_check,
    )


def simulated_user(settings: UserSettings, concurrency: int) -> SimulatedUser:
    """The simulated user on the provider the settings name (no response cache), or on the
    author's Python provider."""
    from aieval.providers import build_provider

    if settings.python is not None:
        return SimulatedUser(
            _python_provider(settings.python),
            settings.model or settings.python,
            temperature=settings.temperature,
            seed=settings.seed,
            prompt=settings.prompt or PERSONA_PROMPT,
        )
    assert settings.provider is not None and settings.model is not None  # validated
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


def _python_provider(ref: str) -> Any:
    found = _imported(ref, "conversation.user.python")
    made = found() if isinstance(found, type) else found
    if not callable(getattr(made, "generate", None)):
        raise ConfigError(
            f"conversation.user.python: {ref!r} has no generate(request) method; expected a "
            "provider (an object or class with async generate(ChatRequest) -> ChatResponse)"
        )
    return made


def _imported(ref: str | None, field: str) -> Any:
    """Import ``module:name``, or ``file.py:name`` (a Python file the author named, imported as
    the eval's ``imports:`` are; an eval file's relative path is its folder's)."""
    if ref is None:
        return None
    module, sep, name = ref.rpartition(":")
    if not module.endswith(".py"):
        return import_reference(ref, field)
    if not sep or not name:
        raise ConfigError(f"{field}: {ref!r} is not a reference 'file.py:name'")
    if not Path(module).is_file():
        raise ConfigError(f"{field}: {module}: Python file not found")
    found: Any = import_file(module)
    try:
        for part in name.split("."):
            found = getattr(found, part)
    except AttributeError:
        raise ConfigError(f"{field}: {module} defines no {name!r}") from None
    return found


def _functions(ref: str | None, field: str) -> Mapping[str, Callable[..., Any]] | None:
    found = _imported(ref, field)
    if found is None:
        return None
    if not isinstance(found, Mapping) or not all(
        isinstance(k, str) and callable(v) for k, v in found.items()
    ):
        raise ConfigError(f"{field}: expected a mapping of names to functions")
    return dict(found)
