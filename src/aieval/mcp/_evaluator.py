"""The ``mcp`` evaluator plug-in: a conversation run whose tools come from an MCP server.

It is the ``conversation`` evaluator with two changes: the tools offered to the model are the
server's ``tools/list`` (each call goes through the SDK's ``tools/call``, with a timeout and a
size cap), and the checks are the tasks' own (``tool_use``, ``answer``). The run's
``conversation`` settings carry an ``mcp`` entry (the server, and the error injection) that the
eval author's call put there; the scenario rows (tasks) never name a server.

A server that hangs past its timeout, exits, or cannot be reached fails the sample it happened
in with an :class:`~aieval.errors.McpError` (the record kept); the next sample connects again,
and when that fails, the remaining samples fail at once with its cause.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aieval._types import Example
from aieval.conversations import (
    CONVERSATION_KEY,
    ConversationEvaluator,
    ConversationRunTarget,
    Played,
    Tool,
)
from aieval.core import Conversation, ConversationOutcome, Output, Target
from aieval.errors import ConfigError, McpError
from aieval.mcp._checks import answer_check, tool_use_check
from aieval.mcp._inject import FAILED_TEXT, ErrorInjection, corrupt
from aieval.mcp._server import McpConnection, McpServer, McpTool
from aieval.mcp._sizes import checked_sizes
from aieval.mcp._tasks import ANSWER, TOOL_USE
from aieval.runner import EvaluatorRequest

__all__ = ["MCP_KEY", "McpEvaluator", "factory"]

#: the key of a sample's ``extra`` with the MCP facts of its conversation (injected errors)
MCP_KEY = "mcp"
#: the error a corrupted result's call records (the model saw the corrupted text)
CORRUPTED = "injected: corrupted result"


@dataclass(slots=True)
class _CallLog:
    """What happened at the server during one conversation."""

    task: str
    epoch: int
    calls: int = 0
    #: (call number, tool, mode) of each injected error
    injected: list[tuple[int, str, str]] = field(default_factory=list)
    failure: McpError | None = None


_LOG: contextvars.ContextVar[_CallLog | None] = contextvars.ContextVar("mcp_call_log", default=None)


class McpEvaluator(ConversationEvaluator):
    """Plays each task against the run's model with the server's tools."""

    def __init__(self, request: EvaluatorRequest) -> None:
        settings = dict(request.conversation or {})
        mcp = settings.pop(MCP_KEY, None)
        if not isinstance(mcp, Mapping) or "server" not in mcp:
            raise ConfigError("evaluator mcp: the run's conversation settings need mcp.server")
        settings.setdefault("builtin_checks", [])
        super().__init__(replace(request, conversation=settings))
        self.server = McpServer.from_config(mcp["server"])
        inject = mcp.get("inject")
        self.injection = None if inject is None else ErrorInjection.from_config(dict(inject))
        self.hooks = replace(
            self.hooks, conversation_checks={TOOL_USE: tool_use_check, ANSWER: answer_check}
        )

    def describe(self) -> dict[str, Any]:
        described = super().describe()
        described["kind"] = "mcp"
        described["server"] = self.server.to_config()
        described["inject"] = None if self.injection is None else self.injection.to_config()
        return described

    def wrap(self, target: Target | None) -> Target:
        inner = super().wrap(target)
        assert isinstance(inner, ConversationRunTarget)
        return McpRunTarget(self, inner)


class McpRunTarget(ConversationRunTarget):
    """Plays one task per example with the server's tools, one session for the run (opened
    at the first sample, opened again after the server was lost)."""

    def __init__(self, evaluator: McpEvaluator, played: ConversationRunTarget) -> None:
        super().__init__(evaluator, played.assistant, played.user, played.inner)
        self.mcp = evaluator
        self.connection: McpConnection | None = None
        self.tools: tuple[Tool, ...] = ()
        #: why the server could not be started or listed, once that happened
        self.refused: McpError | None = None
        self._lock = asyncio.Lock()

    async def _connected(self) -> tuple[McpConnection, tuple[Tool, ...]]:
        async with self._lock:
            if self.refused is not None:
                # the server could not be reached after the last loss: the other samples fail
                # at once with that cause instead of each waiting out connect_timeout again
                raise McpError(f"{self.refused} (not tried again in this run)")
            if self.connection is not None and not self.connection.alive:
                await self.connection.aclose()
                self.connection = None
            if self.connection is None:
                connection = McpConnection(self.mcp.server)
                try:
                    await connection.open()
                    listed = offered(await connection.list_tools(), self.mcp.server.label)
                except McpError as exc:
                    await connection.aclose()
                    self.refused = exc
                    raise
                self.connection = connection
                self.tools = tuple(
                    _adapted(connection, tool, self.mcp.injection) for tool in listed
                )
                # the conversation engine offers the evaluator's tools to every sample
                self.mcp.hooks = replace(self.mcp.hooks, tools=self.tools)
            return self.connection, self.tools

    async def produce(self, example: Example) -> Output:
        ev = self.mcp
        epoch = example.epoch or 0
        try:
            _, tools = await self._connected()
        except McpError as exc:
            scenario = ev.scenario(example.id)
            failed = Conversation(scenario.id, epoch, (), _outcome(exc))
            return Output(
                None,
                Played(scenario, failed),
                error=f"{type(exc).__name__}: {exc}",
                extra={CONVERSATION_KEY: failed.to_dict()},
            )
        log = _CallLog(example.id, epoch)
        token = _LOG.set(log)
        try:
            output = await super().produce(example)
        finally:
            _LOG.reset(token)
        played = output.value
        assert isinstance(played, Played)
        conversation = _marked(played.conversation, log, {t.name for t in tools})
        if log.failure is not None and conversation.outcome.stop_reason != "failed":
            # the server hung or died mid-call: the sample fails (the model's answer after a
            # lost server measures the server's crash, not the model)
            conversation = replace(conversation, outcome=_outcome(log.failure))
            output.error = f"{type(log.failure).__name__}: {log.failure}"
        output.value = Played(played.scenario, conversation, played.fidelity)
        output.extra[CONVERSATION_KEY] = conversation.to_dict()
        output.extra[MCP_KEY] = {
            "injected": [{"call": n, "tool": t, "mode": m} for n, t, m in log.injected],
            "tool_calls": log.calls,
        }
        return output

    async def aclose(self) -> None:
        if self.connection is not None:
            await self.connection.aclose()
            self.connection = None
        await super().aclose()


def offered(tools: tuple[McpTool, ...], server: str) -> tuple[McpTool, ...]:
    """The listing as the model is offered it; a name listed twice is refused (the model could
    not say which it calls, and aieval will not pick one for it), and so is a listing over the
    size caps (:func:`~aieval.mcp._sizes.checked_sizes`: it would be sent with every request)."""
    names = [tool.name for tool in tools]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise McpError(
            f"mcp server {server!r} lists tool {twice[0]!r} more than once: a model cannot tell "
            "them apart (aieval mcp lint names every such problem)"
        )
    checked_sizes(tools, server)
    return tools


def _outcome(exc: McpError) -> ConversationOutcome:
    return ConversationOutcome("failed", False, str(exc), type(exc).__name__)


def _adapted(connection: McpConnection, tool: McpTool, injection: ErrorInjection | None) -> Tool:
    """The server's tool as a conversation tool; its description and schema are sent to the
    model as they are (data), a schema that is not a mapping as an empty one."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    return Tool(tool.name, _Call(connection, tool.name, injection), tool.description or "", schema)


class _Call:
    """One tool's calls through the session (with injection): a result the server marks as an
    error, or an injected failure, raises, so the call's ``error`` is set in the record."""

    def __init__(self, connection: McpConnection, name: str, injection: ErrorInjection | None):
        self.connection, self.name, self.injection = connection, name, injection
        self.__name__ = name

    async def __call__(self, **arguments: Any) -> str:
        log = _LOG.get()
        number = 0
        if log is not None:
            number, log.calls = log.calls, log.calls + 1
        mode = None
        injection = self.injection
        if injection is not None and log is not None:
            hit = injection.hits(self.name, log.task, log.epoch, number)
            mode = injection.mode if hit else None
            if mode is not None:
                log.injected.append((number, self.name, mode))
        if mode == "fail":
            raise ToolFailed(FAILED_TEXT)
        try:
            reply = await self.connection.call(self.name, arguments)
        except McpError as exc:
            if log is not None and log.failure is None:
                log.failure = exc
            raise ToolFailed(str(exc)) from None
        if reply.is_error:
            raise ToolFailed(reply.text)
        return corrupt(reply.text) if mode == "corrupt" else reply.text


class ToolFailed(Exception):
    """The tool's call failed (the server said so, or an injected failure): the model is told."""


def _marked(conversation: Conversation, log: _CallLog, names: set[str]) -> Conversation:
    """The record with each corrupted call's ``error`` set (its result is what the model saw):
    the n-th call that reached a tool is the n-th call of an offered tool with object
    arguments (the others are answered by the tool box without a call)."""
    corrupted = {n for n, _, m in log.injected if m == "corrupt"}
    if not corrupted:
        return conversation
    turns, number = [], 0
    for turn in conversation.turns:
        calls = []
        for call in turn.tool_calls:
            reached = call.name in names and _parsed(call.arguments)
            if reached and number in corrupted and call.error is None:
                call = replace(call, error=CORRUPTED)
            number += reached
            calls.append(call)
        turns.append(replace(turn, tool_calls=tuple(calls)))
    return replace(conversation, turns=tuple(turns))


def _parsed(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments) if arguments.strip() else {}, dict)
    except ValueError:
        return False


def factory(request: EvaluatorRequest) -> McpEvaluator:
    """Play each task against the run's model with an MCP server's tools."""
    return McpEvaluator(request)
