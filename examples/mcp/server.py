"""A small MCP server to evaluate: weather, local time and sums for a city assistant.

``python server.py`` serves it over stdio (as an MCP client starts it); ``--broken`` is the
next version with a bug: the weather and time tools' descriptions swapped, which no schema
check can see and which makes a model call the wrong tool.
"""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import MCPServer

WEATHER = "Get the current weather (sky and temperature) in a city, e.g. Paris."
TIME = "Get the current local time in a city, e.g. Tokyo."


def build(broken: bool) -> MCPServer:
    app: MCPServer = MCPServer("city-assistant", log_level="WARNING")
    weather, time = (TIME, WEATHER) if broken else (WEATHER, TIME)

    @app.tool(description=weather)
    def get_weather(city: str) -> str:
        return f"sunny, 21 C in {city}"

    @app.tool(description=time)
    def get_time(city: str) -> str:
        return f"12:00 in {city}"

    @app.tool(description="Add two whole numbers and return their sum.")
    def add(a: int, b: int) -> int:
        return a + b

    return app


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    build("--broken" in sys.argv[1:]).run()
