"""A scripted fake model for conversation tests: one loopback server answers both the target
and the simulated user, deterministically, so a conversation can be recorded and replayed.

The target looks orders up with the ``lookup_order`` tool and reports the status; the simulated
user asks about the order of its goal ("track order N"), insists ``N % 3`` times, then says it
is done.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval.conversations import ChatTarget, SimulatedUser
from aieval.providers import OpenAIProvider

LOOKUP = {
    "name": "lookup_order",
    "description": "Look an order up by id.",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "integer"}},
        "required": ["order_id"],
    },
}


def scenario_row(n: int, **changes: Any) -> dict[str, Any]:
    """A scenario of order ``n``, with a recorded result of ``lookup_order`` for it."""
    row: dict[str, Any] = {
        "id": f"order-{n}",
        "goal": f"track order {n}",
        "persona": "a patient customer",
        "max_turns": 6,
        "tools": [
            {
                **LOOKUP,
                "calls": [{"arguments": {"order_id": n}, "result": {"status": f"shipped-{n}"}}],
            }
        ],
    }
    row.update(changes)
    return row


def responder(body: Any) -> Reply:
    messages = body["messages"]
    first = messages[0]
    if first["role"] == "system" and "role-playing a user" in first["content"]:
        return _user_reply(first["content"], messages)
    return _target_reply(body, messages)


def _user_reply(system: str, messages: list[dict[str, Any]]) -> Reply:
    n = int(re.search(r"track order (\d+)", system).group(1))  # type: ignore[union-attr]
    said = sum(1 for m in messages if m["role"] == "assistant")
    if said == 0:
        return Reply(f"Hello, where is my order {n}?")
    if said > n % 3:
        return Reply("Thanks, that is all. [DONE]")
    return Reply(f"Are you sure about order {n}? Please check again ({said}).")


def _target_reply(body: dict[str, Any], messages: list[dict[str, Any]]) -> Reply:
    last = messages[-1]
    if last["role"] == "tool":
        return Reply(f"Your order is {json.loads(last['content'])['status']}.")
    found = re.search(r"order (\d+)", last.get("content") or "")
    if found and body.get("tools"):
        call = (f"call_{len(messages)}", "lookup_order", json.dumps({"order_id": int(found[1])}))
        return Reply("", tool_calls=(call,))
    return Reply(f"You said: {last.get('content')}")


class Fake:
    """The loopback server scripted with :func:`responder`, and providers on it (closed by
    :meth:`aclose`)."""

    def __init__(self, server: OpenAIServer) -> None:
        server.responder = responder
        self.server = server
        self.providers: list[OpenAIProvider] = []

    def provider(self) -> OpenAIProvider:
        made = OpenAIProvider(self.server.base_url, timeout=10.0)
        self.providers.append(made)
        return made

    def target(self) -> ChatTarget:
        return ChatTarget(self.provider(), "target-model", temperature=0.0)

    def user(self, **options: Any) -> SimulatedUser:
        return SimulatedUser(self.provider(), "user-model", **options)

    async def aclose(self) -> None:
        for made in self.providers:
            await made.aclose()


@contextmanager
def no_connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail every outbound connection attempt; yields the attempts seen."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> Any:
        attempts.append(address)
        raise OSError(f"the test's socket guard refused a connection to {address!r}")

    with monkeypatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket.socket, "connect_ex", refuse)
        yield attempts
