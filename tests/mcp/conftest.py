"""The MCP fixture server (a real ``mcp`` server process) over stdio and over HTTP."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from tests.mcp.scripted_model import ScriptedModel
from tests.mcp.servers import command
from tests.support.openai_server import OpenAIServer


@pytest.fixture(scope="module")
def broken_http() -> Iterator[str]:
    """The ``broken`` version served over streamable HTTP on 127.0.0.1 (a free port)."""
    yield from served("broken")


@pytest.fixture(scope="module")
def good_http() -> Iterator[str]:
    """The ``good`` version served over streamable HTTP on 127.0.0.1 (a free port)."""
    yield from served("good")


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    """The scripted client models on the loopback OpenAI server."""
    with OpenAIServer() as server:
        server.responder = ScriptedModel()
        yield server.base_url


def served(version: str) -> Iterator[str]:
    process = subprocess.Popen(
        [*command(version), "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server has bound its port
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{line.split()[1]}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
