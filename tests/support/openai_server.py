"""A scriptable loopback model server speaking the OpenAI and Anthropic HTTP APIs.

It runs an aiohttp app on 127.0.0.1 (ephemeral port) in a background thread with its own event
loop, so a test's client and the server never share a loop. Each request is answered by, in order:
the next queued behaviour (:meth:`OpenAIServer.enqueue`), else ``responder(body)`` when set and not
``None``, else a deterministic echo of the last user message.

Behaviours: :class:`Reply`, :class:`Status`, :class:`Hang`, :class:`Malformed`.

``POST /v1/embeddings`` answers each input with :func:`letter_vector` (or ``embedder(text)``
when set); queued behaviours other than :class:`Reply` apply to it as to chat requests.

Example::

    with OpenAIServer() as server:
        server.enqueue(Status(429, headers={"Retry-After": "0.2"}), Reply("hi"))
        ...  # point a client at server.base_url
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

__all__ = [
    "Behaviour",
    "Hang",
    "Malformed",
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
    "Status",
    "echo_text",
    "letter_vector",
]


@dataclass(frozen=True)
class Reply:
    """A successful completion with ``text`` after ``delay`` seconds.

    ``usage`` is ``(prompt_tokens, completion_tokens)``; by default whitespace token counts.
    ``tool_calls`` are ``(id, name, arguments JSON text)``: sent as the message's tool calls
    (with ``content`` null when ``text`` is empty).
    """

    text: str
    delay: float = 0.0
    usage: tuple[int, int] | None = None
    finish_reason: str = "stop"
    model: str | None = None
    tool_calls: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Status:
    """An HTTP error (or any status) with an optional JSON body and headers."""

    code: int
    json_body: Any = None
    headers: dict[str, str] | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Hang:
    """Never answer (until the client disconnects or the server stops)."""


@dataclass(frozen=True)
class Malformed:
    """Answer ``raw`` bytes as the body, e.g. non-JSON, JSON without choices, truncated JSON."""

    raw: bytes
    status: int = 200
    content_type: str = "application/json"


Behaviour = Reply | Status | Hang | Malformed


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it."""

    path: str
    body: Any
    headers: CIMultiDict[str]  # case-insensitive, like HTTP
    received_at: float = field(default=0.0)
    in_flight: int = 0


def echo_text(body: Any) -> str:
    """The default reply: ``"echo: "`` plus the last user message's text."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # Anthropic-style content blocks
                content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            return f"echo: {content}"
    return "echo: "


def letter_vector(text: str) -> list[float]:
    """A deterministic 27-dimension embedding: the counts of a..z (case-folded), then of
    everything else; texts with the same letters point the same way."""
    vector = [0.0] * 27
    for char in text.casefold():
        vector[ord(char) - 97 if "a" <= char <= "z" else 26] += 1.0
    return vector


def _openai_message(reply: Reply) -> dict[str, Any]:
    if not reply.tool_calls:
        return {"role": "assistant", "content": reply.text}
    return {
        "role": "assistant",
        "content": reply.text or None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in reply.tool_calls
        ],
    }


def _count_tokens(body: Any) -> int:
    messages = body.get("messages", []) if isinstance(body, dict) else []
    return sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))


class OpenAIServer:
    """A loopback server; use as a context manager or call :meth:`start` / :meth:`stop`.

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1`` (OpenAI-style clients).
        root_url: ``http://127.0.0.1:PORT`` (the Anthropic SDK appends ``/v1/messages``).
        requests: every request received, in arrival order.
        responder: optional ``callable(body) -> Behaviour | None``.
        max_in_flight: the most requests the server was handling at once.
        required_key: when set, a chat request without ``Authorization: Bearer <it>`` is
            answered 401 (an OpenAI-style error body), like a keyed gateway.
    """

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[Any], Behaviour | None] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self.required_key: str | None = None
        self.embedder: Callable[[str], list[float]] = letter_vector
        self._queue: deque[Behaviour] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._port = 0
        self._hold: tuple[int, float] | None = None
        self._hold_reached: asyncio.Event | None = None  # made on the server's loop

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def enqueue(self, *behaviours: Behaviour) -> None:
        """Answer the next requests with these behaviours, in order."""
        self._queue.extend(behaviours)

    def hold_until_in_flight(self, count: int, timeout: float = 30.0) -> None:
        """Hold every answer until ``count`` requests have been in flight at once.

        A test of a concurrency bound then waits on the condition itself, not on reply delays
        that a slow client could outlast. After ``timeout`` seconds the held requests are
        answered anyway, so a bound that is never reached fails the test's own assertion on
        :attr:`max_in_flight` instead of hanging it.
        """
        self._hold_reached = None
        self._hold = (count, time.monotonic() + timeout)

    def reset(self) -> None:
        """Forget queued behaviours, the responder, recorded requests and counters."""
        self._queue.clear()
        self.responder = None
        self.requests.clear()
        self.max_in_flight = self.in_flight

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready), name="openai-test-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the test server did not start")
        return self

    def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._setup(sock))
        ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._teardown())
        self._loop.close()

    async def _setup(self, sock: socket.socket) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.SockSite(self._runner, sock, backlog=2048).start()

    async def _teardown(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = None
        self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- handlers ----------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "test-model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, self._openai_reply, self._openai_error)

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, self._embedding_reply, self._openai_error)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, self._anthropic_reply, self._anthropic_error)

    async def _handle(
        self,
        request: web.Request,
        reply: Callable[[Any, Reply], dict[str, Any]],
        error: Callable[[int], dict[str, Any]],
    ) -> web.StreamResponse:
        raw = await request.read()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        hold, reached = self._hold, self._hold_reached
        if hold is not None and reached is not None and self.max_in_flight >= hold[0]:
            reached.set()
        self.requests.append(
            RecordedRequest(
                path=request.path,
                body=body,
                headers=CIMultiDict(request.headers),
                received_at=time.monotonic(),
                in_flight=self.in_flight,
            )
        )
        try:
            await self._held()
            if self.required_key and not self._authorized(request):
                return web.json_response(
                    {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
                    status=401,
                )
            behaviour = self._next_behaviour(body)
            return await self._perform(request, behaviour, body, reply, error)
        finally:
            self.in_flight -= 1

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.required_key}"

    async def _held(self) -> None:
        if self._hold is None:
            return
        count, until = self._hold
        if self.max_in_flight < count:
            if self._hold_reached is None:
                self._hold_reached = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hold_reached.wait(), until - time.monotonic())
            self._hold_reached.set()  # given up: release the others held with this one
        self._hold = None  # reached (or given up): later requests are answered at once

    def _next_behaviour(self, body: Any) -> Behaviour:
        try:
            return self._queue.popleft()
        except IndexError:
            pass
        if self.responder is not None:
            chosen = self.responder(body)
            if chosen is not None:
                return chosen
        return Reply(echo_text(body))

    async def _perform(
        self,
        request: web.Request,
        behaviour: Behaviour,
        body: Any,
        reply: Callable[[Any, Reply], dict[str, Any]],
        error: Callable[[int], dict[str, Any]],
    ) -> web.StreamResponse:
        if isinstance(behaviour, Hang):
            await self._hang(request)
            raise ConnectionResetError("hung request abandoned")
        if isinstance(behaviour, Malformed):
            return web.Response(
                body=behaviour.raw, status=behaviour.status, content_type=behaviour.content_type
            )
        if isinstance(behaviour, Status):
            await asyncio.sleep(behaviour.delay)
            payload = (
                behaviour.json_body if behaviour.json_body is not None else error(behaviour.code)
            )
            return web.json_response(payload, status=behaviour.code, headers=behaviour.headers)
        if behaviour.delay:
            await asyncio.sleep(behaviour.delay)
        return web.json_response(reply(body, behaviour))

    async def _hang(self, request: web.Request) -> None:
        assert self._stopping is not None
        # Poll for the client going away so the in-flight count stays truthful.
        while not self._stopping.is_set():
            transport = request.transport
            if transport is None or transport.is_closing():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), 0.05)

    # -- wire formats ------------------------------------------------------------------------

    @staticmethod
    def _usage(body: Any, behaviour: Reply) -> tuple[int, int]:
        if behaviour.usage is not None:
            return behaviour.usage
        return _count_tokens(body), len(behaviour.text.split())

    def _openai_reply(self, body: Any, behaviour: Reply) -> dict[str, Any]:
        prompt_tokens, completion_tokens = self._usage(body, behaviour)
        model = behaviour.model or (body or {}).get("model") or "test-model"
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": _openai_message(behaviour),
                    "finish_reason": behaviour.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _embedding_reply(self, body: Any, behaviour: Reply) -> dict[str, Any]:
        given = (body or {}).get("input", [])
        texts = [given] if isinstance(given, str) else list(given)
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": self.embedder(str(text))}
                for i, text in enumerate(texts)
            ],
            "model": behaviour.model or (body or {}).get("model") or "test-embedding",
            "usage": {
                "prompt_tokens": sum(len(str(t).split()) for t in texts),
                "total_tokens": sum(len(str(t).split()) for t in texts),
            },
        }

    @staticmethod
    def _openai_error(code: int) -> dict[str, Any]:
        kinds = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}
        kind = kinds.get(code, "server_error" if code >= 500 else "error")
        return {"error": {"message": f"test server error {code}", "type": kind, "code": kind}}

    def _anthropic_reply(self, body: Any, behaviour: Reply) -> dict[str, Any]:
        input_tokens, output_tokens = self._usage(body, behaviour)
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(
            behaviour.finish_reason, behaviour.finish_reason
        )
        return {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": behaviour.model or (body or {}).get("model") or "test-model",
            "content": [{"type": "text", "text": behaviour.text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }

    @staticmethod
    def _anthropic_error(code: int) -> dict[str, Any]:
        kinds = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
        kind = kinds.get(code, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"test server error {code}"}}
