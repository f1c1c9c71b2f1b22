"""Test helpers for the evaluation server: a live uvicorn on loopback and an SSE reader."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

__all__ = ["EXAMPLES", "SSE", "LiveServer", "read_events", "rows_body"]

#: The repository's workflow examples (definitions and recorded run folders).
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"


@dataclass(frozen=True)
class SSE:
    """One parsed server-sent event (``comment`` set for keep-alive comment lines)."""

    id: int | None = None
    event: str | None = None
    data: Any = None
    comment: str | None = None


async def read_events(lines: AsyncIterator[str]) -> AsyncIterator[SSE]:
    """Parse an event stream line by line, yielding events and comment lines."""
    fields: dict[str, str] = {}
    async for raw in lines:
        line = raw.rstrip("\r")
        if line.startswith(":"):
            yield SSE(comment=line[1:].strip())
            continue
        if line == "":
            if fields:
                data = fields.get("data")
                yield SSE(
                    id=int(fields["id"]) if "id" in fields else None,
                    event=fields.get("event"),
                    data=json.loads(data) if data is not None else None,
                )
                fields = {}
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields[key] = fields[key] + "\n" + value if key == "data" and key in fields else value


class LiveServer:
    """``app`` served by uvicorn on 127.0.0.1 (an ephemeral port) in a background thread."""

    def __init__(self, app: FastAPI) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 120  # generous: the machine may be busy
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        """An async client for this server (no overall timeout: streams may be long)."""
        return httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(20.0), **kwargs)


def rows_body(n: int = 6, *, name: str = "qa", **extra: Any) -> dict[str, Any]:
    """An evaluation of ``n`` inline rows with recorded predictions; odd rows are right."""
    rows = [
        {"id": f"r{i}", "prompt": f"q{i}", "expected": "yes", "prediction": ("no", "yes")[i % 2]}
        for i in range(n)
    ]
    return {"name": name, "dataset": {"rows": rows}, "scorers": ["exact_match"], **extra}
