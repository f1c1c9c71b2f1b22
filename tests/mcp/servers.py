"""The MCP fixture server's commands and servers (see fixture_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from aieval.mcp import McpServer

SERVER = Path(__file__).with_name("fixture_server.py")


def command(version: str = "good") -> list[str]:
    """The fixture server's command (stdio)."""
    return [sys.executable, str(SERVER), "--version", version]


def stdio(version: str = "good", **options: float) -> McpServer:
    """The fixture server over stdio."""
    return McpServer.stdio(*command(version), **options)  # type: ignore[arg-type]
