"""The MCP fixture server (a real ``mcp`` server process) over stdio and over HTTP."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from tests.mcp.servers import command


@pytest.fixture(scope="module")
def broken_http() -> Iterator[str]:
    """The ``broken`` version served over streamable HTTP on 127.0.0.1 (a free port)."""
    process = subprocess.Popen(
        [*command("broken"), "--http"],
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
