"""How much of a server's tool listing may reach the model under test.

A listing is the server's text, sent to the model with every request of every sample: lint
warns at a long description or schema and errs at one over the cap, and a run refuses to send
a tool over the cap, or a listing over its total, as an :class:`~aieval.errors.McpError` naming
the tool and the size (the server is what is evaluated; it cannot fill the model's context).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from aieval.errors import McpError
from aieval.mcp._server import McpTool

__all__ = [
    "DESCRIPTION_WARN_CHARS",
    "MAX_LISTING_CHARS",
    "MAX_TOOL_TEXT_CHARS",
    "SCHEMA_WARN_CHARS",
    "checked_sizes",
    "description_chars",
    "schema_chars",
]

#: a description longer than this is a lint warning (a paragraph says what a tool does)
DESCRIPTION_WARN_CHARS = 2_000
#: an input schema (as JSON) longer than this is a lint warning
SCHEMA_WARN_CHARS = 10_000
#: a description or input schema (as JSON) longer than this is a lint error and is never sent
MAX_TOOL_TEXT_CHARS = 20_000
#: every description and schema of one listing together: over this the listing is never sent
MAX_LISTING_CHARS = 200_000


def description_chars(tool: McpTool) -> int:
    """The characters of the tool's description."""
    return len(tool.description or "")


def schema_chars(tool: McpTool) -> int:
    """The characters of the tool's input schema as the JSON sent to the model."""
    return len(json.dumps(tool.input_schema, ensure_ascii=False, default=str))


def checked_sizes(tools: Sequence[McpTool], server: str) -> None:
    """Refuse a listing the model would be sent over the caps.

    Raises:
        McpError: a tool's description or schema is over :data:`MAX_TOOL_TEXT_CHARS`, or all
            of them together over :data:`MAX_LISTING_CHARS`; the message names the tool and
            the size.
    """
    total = 0
    for tool in tools:
        for what, size in (
            ("description", description_chars(tool)),
            ("input schema", schema_chars(tool)),
        ):
            if size > MAX_TOOL_TEXT_CHARS:
                raise McpError(
                    f"mcp server {server!r}: tool {tool.name!r} has a {what} of {size:,} "
                    f"characters, over the limit of {MAX_TOOL_TEXT_CHARS:,} sent to a model; "
                    "not offered (aieval mcp lint names every such tool)"
                )
            total += size
    if total > MAX_LISTING_CHARS:
        raise McpError(
            f"mcp server {server!r}: its {len(tools)} tools' descriptions and schemas are "
            f"{total:,} characters, over the limit of {MAX_LISTING_CHARS:,} sent to a model; "
            "not offered"
        )
