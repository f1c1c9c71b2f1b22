"""Running a target's tool calls: a row's recorded results, or the eval author's functions.

A row may declare tools and record their results; only the eval author's code (``tools=`` of
:func:`~aieval.conversations.run_conversation`) gives Python functions, and a row can never name
one. A function with a parameter named ``environment`` is given the conversation's
:class:`~aieval.conversations.Environment` (the state the tools share); the target's arguments
never set it. A call of a tool nobody provides, or one without a recorded result for its
arguments, is answered with an error the target sees (and the record keeps): never with a
guess.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from aieval.conversations._environment import ENVIRONMENT_PARAMETER, Environment
from aieval.conversations._scenario import Scenario
from aieval.conversations._target import ToolSpec
from aieval.core import ToolCall, TurnSource
from aieval.errors import ConfigError

__all__ = ["Tool", "ToolBox", "takes_environment"]

#: an author's tool function: called with the call's arguments as keywords; its result is sent
#: back as text (a value that is not a str as its JSON)
ToolFunction = Callable[..., Any | Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    """A Python tool the eval's author provides."""

    name: str
    function: ToolFunction
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)


class ToolBox:
    """The tools of one conversation: the row's fixtures and the author's functions.

    A row's recorded result for the call's arguments comes first, then the author's function
    of that name, else the call fails (its error is the tool turn's content).
    """

    def __init__(
        self,
        scenario: Scenario,
        tools: Sequence[Tool] = (),
        environment: Environment | None = None,
    ) -> None:
        self.scenario = scenario
        self.environment = environment
        self.functions: dict[str, Tool] = {}
        for tool in tools:
            if not isinstance(tool, Tool):
                raise ConfigError(f"tools=: expected Tool objects, got {type(tool).__name__}")
            if tool.name in self.functions:
                raise ConfigError(f"tools=: tool {tool.name!r} is given twice")
            self.functions[tool.name] = tool

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the target is offered: the author's tools, then the row's others, by name."""
        specs = [ToolSpec(t.name, t.description, t.parameters) for t in self.functions.values()]
        specs += [
            ToolSpec(f.name, f.description, f.parameters)
            for f in self.scenario.tools
            if f.name not in self.functions
        ]
        return tuple(specs)

    async def run(self, call: ToolCall) -> tuple[ToolCall, TurnSource]:
        """``call`` with its result (or its error) filled in, and where the result came from:
        ``scripted`` (the row's recorded result) or ``live`` (a function ran, or nothing
        answered)."""
        if (fixture := self.scenario.tool(call.name)) is not None:
            with contextlib.suppress(ValueError):
                recorded = fixture.result_for(json.loads(call.arguments or "{}"))
                if recorded is not None:
                    return replace(call, result=recorded), "scripted"
        return await self._call(call), "live"

    async def _call(self, call: ToolCall) -> ToolCall:
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError as exc:
            return _failed(call, f"the arguments are not JSON: {exc}")
        fixture = self.scenario.tool(call.name)
        tool = self.functions.get(call.name)
        if tool is None:
            if fixture is None:
                return _failed(call, f"no tool named {call.name!r}")
            return _failed(call, f"tool {call.name!r} has no recorded result for these arguments")
        if not isinstance(arguments, dict):
            return _failed(call, "the arguments are not a JSON object")
        if takes_environment(tool.function):
            if ENVIRONMENT_PARAMETER in arguments:  # the target's data never sets the state
                return _failed(call, f"{ENVIRONMENT_PARAMETER!r} is not an argument of this tool")
            if self.environment is None:
                return _failed(call, "it needs the conversation's environment, and none was given")
            arguments = {**arguments, ENVIRONMENT_PARAMETER: self.environment}
        try:
            value = tool.function(**arguments)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # the tool failed: the target is told, the record keeps it
            return _failed(call, f"{type(exc).__name__}: {exc}")
        return replace(call, result=value if isinstance(value, str) else _json_text(value))


def takes_environment(function: ToolFunction) -> bool:
    """Whether an author's tool function is given the conversation's environment."""
    try:
        return ENVIRONMENT_PARAMETER in inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature takes no environment
        return False


def _failed(call: ToolCall, error: str) -> ToolCall:
    return replace(call, result=f"error: {error}", error=error)


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
