"""An MCP server under test, and one connection to it through the official ``mcp`` SDK.

The server is the eval author's choice: a command started over stdio (its arguments given as a
list, never through a shell) or a streamable HTTP URL. Nothing the server sends back (tool
names, descriptions, schemas, results) is ever run, opened or used as a path, URL or key: it is
text for the model under test. Every request has a timeout; a server that hangs, dies or
answers out of shape is an :class:`~aieval.errors.McpError` naming the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aieval.errors import ConfigError, McpError

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_RESULT_CHARS",
    "McpConnection",
    "McpServer",
    "McpTool",
    "ToolReply",
]

#: seconds a tool call (or a listing) may take before it fails as a hung server
DEFAULT_CALL_TIMEOUT = 30.0
#: seconds the server may take to start and answer the handshake
DEFAULT_CONNECT_TIMEOUT = 30.0
#: the most characters of one tool result sent to the model; more is a tool error, not a cut
DEFAULT_MAX_RESULT_CHARS = 100_000
#: the most tools/list pages read (a server that pages forever is refused)
MAX_PAGES = 100


@dataclass(frozen=True, slots=True)
class McpServer:
    """Where the MCP server under test runs: ``command`` (stdio) or ``url`` (streamable HTTP).

    Attributes:
        command: the program and its arguments, started without a shell (stdio).
        url: an ``http://`` or ``https://`` streamable HTTP endpoint.
        env: names of this process's environment variables passed to the command (the SDK
            passes only a few by default); their values are never recorded.
        cwd: the command's working directory.
        call_timeout: seconds one tool call or listing may take.
        connect_timeout: seconds the start and handshake may take.
        max_result_chars: the most characters of one tool result.
    """

    command: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[str, ...] = ()
    cwd: str | None = None
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS

    def __post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise ConfigError("mcp server: give a command (stdio) or a url (streamable HTTP), once")
        if isinstance(self.env, str) or not all(isinstance(n, str) and n for n in self.env):
            raise ConfigError("mcp server env: expected a list of environment variable names")
        if self.command and not all(isinstance(part, str) and part for part in self.command):
            raise ConfigError("mcp server: the command is a list of non-empty strings")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ConfigError(
                    f"mcp server url {self.url!r}: expected http://HOST[:PORT]/PATH or https://..."
                )
        for name, value in (
            ("call_timeout", self.call_timeout),
            ("connect_timeout", self.connect_timeout),
        ):
            if not value > 0:
                raise ConfigError(f"mcp server {name}: expected seconds > 0, got {value!r}")
        if self.max_result_chars < 1:
            raise ConfigError("mcp server max_result_chars: expected at least 1")

    @classmethod
    def stdio(cls, *command: str, **options: Any) -> McpServer:
        """A server started as ``command`` (program, then arguments) over stdio."""
        return cls(command=tuple(command), **options)

    @classmethod
    def http(cls, url: str, **options: Any) -> McpServer:
        """A server reached at a streamable HTTP ``url``."""
        return cls(url=url, **options)

    @classmethod
    def from_config(cls, data: Any, where: str = "mcp.server") -> McpServer:
        """The server from an eval file's or a run config's mapping (``command``/``url`` and
        the options above); anything else is refused, naming the field."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a mapping with command: or url:")
        allowed = {"command", "url", "env", "cwd", "call_timeout", "connect_timeout"}
        allowed.add("max_result_chars")
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}: not a field; the fields are {sorted(allowed)}"
            )
        command = data.get("command") or ()
        if isinstance(command, str) or not isinstance(command, Sequence):
            raise ConfigError(f"{where}.command: expected a list (program, then arguments)")
        options = {k: v for k, v in data.items() if k not in ("command", "url")}
        if "env" in options:
            options["env"] = tuple(options["env"] or ())
        try:
            return cls(command=tuple(command), url=data.get("url"), **options)
        except TypeError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    def to_config(self) -> dict[str, Any]:
        """What a run's config records (the environment by names only: values may be keys)."""
        return {
            "command": list(self.command) or None,
            "url": self.url,
            "env": list(self.env),
            "cwd": self.cwd,
            "call_timeout": self.call_timeout,
            "connect_timeout": self.connect_timeout,
            "max_result_chars": self.max_result_chars,
        }

    @property
    def label(self) -> str:
        """The server as messages name it."""
        if self.url is not None:
            return self.url
        return " ".join(
            Path(self.command[0]).name if i == 0 else p for i, p in enumerate(self.command)
        )


@dataclass(frozen=True, slots=True)
class McpTool:
    """A tool as the server lists it (``tools/list``): data, never code.

    ``input_schema`` is whatever the server sent (a lint finding when it is not a JSON Schema).
    """

    name: str
    description: str | None
    input_schema: Any

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True, slots=True)
class ToolReply:
    """One tool call's answer: its text for the model, and whether the server said it failed."""

    text: str
    is_error: bool = False


class McpConnection:
    """One session with the server, owned by a task of its own (the SDK's client must be
    entered and left in one task; the calls come from the run's sample tasks).

    Use ``async with McpConnection(server) as conn`` or :meth:`open` / :meth:`aclose`.
    """

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._failure: BaseException | None = None
        #: a call lost the server (not a timeout): the session is not used again
        self._lost = False

    async def __aenter__(self) -> McpConnection:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Start (or reach) the server and finish the handshake, within ``connect_timeout``."""
        if self._task is not None:
            return
        self._task = asyncio.create_task(self._own(), name=f"mcp {self.server.label}")
        ready = asyncio.create_task(self._ready.wait())
        try:
            await asyncio.wait(
                {ready, self._task},
                timeout=self.server.connect_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            ready.cancel()
        if not self._ready.is_set():
            failure = self._failure
            await self.aclose()
            if failure is None:
                raise McpError(
                    f"mcp server {self.server.label!r}: no handshake within "
                    f"{self.server.connect_timeout:g} s"
                )
            raise McpError(
                f"mcp server {self.server.label!r} could not be reached: {_cause(failure)}"
            ) from None

    async def _own(self) -> None:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from mcp import Client

        target: Any
        if self.server.url is not None:
            target = self.server.url
        else:
            parameters = StdioServerParameters(
                command=self.server.command[0],
                args=list(self.server.command[1:]),
                env={n: os.environ[n] for n in self.server.env if n in os.environ} or None,
                cwd=self.server.cwd,
            )
            target = stdio_client(parameters, errlog=_errlog())
        try:
            async with Client(target, read_timeout_seconds=self.server.call_timeout) as client:
                self._client = client
                self._ready.set()
                await self._closing.wait()
        except BaseException as exc:  # kept for the caller: the owner task never raises
            self._failure = exc
        finally:
            self._client = None

    @property
    def alive(self) -> bool:
        """Whether the session is open (the server has not exited)."""
        return (
            not self._lost
            and self._client is not None
            and self._task is not None
            and not self._task.done()
        )

    def _live(self) -> Any:
        if self._client is None or self._task is None or self._task.done():
            cause = "" if self._failure is None else f": {_cause(self._failure)}"
            raise McpError(f"mcp server {self.server.label!r} is not connected (it exited{cause})")
        return self._client

    async def list_tools(self) -> tuple[McpTool, ...]:
        """Every tool the server lists (all pages), in its order."""
        client = self._live()
        tools: list[McpTool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = await self._timed(client.list_tools(cursor=cursor), "tools/list")
            for tool in result.tools:
                tools.append(McpTool(tool.name, tool.description, tool.input_schema))
            cursor = result.next_cursor
            if not cursor:
                return tuple(tools)
        raise McpError(f"mcp server {self.server.label!r}: tools/list pages past {MAX_PAGES}")

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        """Call tool ``name``; its result as text (over ``max_result_chars``: an error reply).

        Raises:
            McpError: the server hung past ``call_timeout``, exited, or answered out of shape.
        """
        client = self._live()
        result = await self._timed(client.call_tool(name, dict(arguments)), f"tools/call {name!r}")
        text = result_text(result)
        if len(text) > self.server.max_result_chars:
            return ToolReply(
                f"the result of {len(text)} characters is over the limit of "
                f"{self.server.max_result_chars} (max_result_chars)",
                is_error=True,
            )
        return ToolReply(text, bool(result.is_error))

    async def _timed(self, call: Any, what: str) -> Any:
        try:
            return await asyncio.wait_for(call, self.server.call_timeout)
        except TimeoutError:
            raise McpError(
                f"mcp server {self.server.label!r}: {what} had no answer within "
                f"{self.server.call_timeout:g} s (call_timeout)"
            ) from None
        except McpError:
            raise
        except Exception as exc:
            self._lost = True
            if self._task is not None and self._task.done():
                raise McpError(
                    f"mcp server {self.server.label!r} exited during {what}: {_cause(exc)}"
                ) from None
            raise McpError(f"mcp server {self.server.label!r}: {what}: {_cause(exc)}") from None

    async def aclose(self) -> None:
        """Leave the session (a stdio server's process is stopped by the SDK)."""
        self._closing.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), self.server.connect_timeout)
            except TimeoutError:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


def result_text(result: Any) -> str:
    """A tool result's content as text: its text parts joined; structured content as JSON
    when there is no text; other parts (images, audio, resources) named, never fetched."""
    parts: list[str] = []
    for item in getattr(result, "content", None) or ():
        kind = getattr(item, "type", None)
        if kind == "text":
            parts.append(str(item.text))
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        return json.dumps(structured, sort_keys=True, ensure_ascii=False, default=str)
    return "\n".join(parts)


def _errlog() -> Any:
    """Where the server's stderr goes: this process's (a captured stream has no descriptor
    for the child to write to)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__
    return sys.stderr


def _cause(exc: BaseException) -> str:
    """The innermost cause of a failure (the SDK's task groups wrap errors in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
