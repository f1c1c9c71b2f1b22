"""Lint of a server's ``tools/list``: what a model needs to pick and call each tool right.

Errors make a tool unusable or ambiguous (no description, a schema that is not a JSON Schema
object, a name twice or one the chat APIs refuse); warnings make it likely to be misused (a
vague description, an argument without a description, no tools at all). A description or input
schema over :data:`~aieval.mcp._sizes.MAX_TOOL_TEXT_CHARS` (or a listing over
:data:`~aieval.mcp._sizes.MAX_LISTING_CHARS`) is an error: a run refuses to send it to a model;
a long one is a warning.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from aieval.mcp._server import McpTool
from aieval.mcp._sizes import (
    DESCRIPTION_WARN_CHARS,
    MAX_LISTING_CHARS,
    MAX_TOOL_TEXT_CHARS,
    SCHEMA_WARN_CHARS,
    description_chars,
    schema_chars,
)

__all__ = ["LintFinding", "Severity", "lint_tools"]

Severity = Literal["error", "warning"]
#: a tool name the chat APIs accept (OpenAI's function-name rule)
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: fewer words than this is a vague description
MIN_DESCRIPTION_WORDS = 4
#: descriptions that say nothing about what the tool does
_VAGUE = frozenset({"todo", "tbd", "tool", "a tool", "does stuff", "helper", "function", "n/a"})


@dataclass(frozen=True, slots=True)
class LintFinding:
    """One problem of one tool (``tool`` is ``None`` for the listing as a whole).

    Attributes:
        severity: ``error`` (exit code 1 from ``aieval mcp lint``) or ``warning``.
        tool: the tool's name, as the server sent it.
        code: a stable identifier (``missing-description``, ``invalid-schema``...).
        message: what is wrong and what to do.
    """

    severity: Severity
    tool: str | None
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "tool": self.tool,
            "code": self.code,
            "message": self.message,
        }


def lint_tools(tools: Sequence[McpTool]) -> tuple[LintFinding, ...]:
    """The findings of a tool listing, errors first, then by tool name in listing order."""
    findings: list[LintFinding] = []
    if not tools:
        findings.append(LintFinding("warning", None, "no-tools", "the server lists no tools"))
    counts = Counter(tool.name for tool in tools)
    for name, count in counts.items():
        if count > 1:
            findings.append(
                LintFinding(
                    "error",
                    name,
                    "duplicate-name",
                    f"{count} tools are named {name!r}: a model cannot tell them apart; "
                    "rename all but one",
                )
            )
    for tool in tools:
        findings += _tool(tool)
    total = sum(description_chars(t) + schema_chars(t) for t in tools)
    if total > MAX_LISTING_CHARS:
        findings.append(
            LintFinding(
                "error",
                None,
                "oversized-listing",
                f"the descriptions and schemas are {total:,} characters together, over the "
                f"limit of {MAX_LISTING_CHARS:,}: a run refuses to send them to a model",
            )
        )
    order = {"error": 0, "warning": 1}
    return tuple(sorted(findings, key=lambda f: order[f.severity]))


def _tool(tool: McpTool) -> list[LintFinding]:
    found: list[LintFinding] = []
    if not _NAME.match(tool.name):
        found.append(
            LintFinding(
                "error",
                tool.name,
                "invalid-name",
                "the name must be 1-64 letters, digits, '_' or '-' (the chat APIs refuse others)",
            )
        )
    found += _sizes(tool)
    found += _description(tool)
    found += _schema(tool)
    return found


def _sizes(tool: McpTool) -> list[LintFinding]:
    found: list[LintFinding] = []
    for what, size, warn in (
        ("description", description_chars(tool), DESCRIPTION_WARN_CHARS),
        ("schema", schema_chars(tool), SCHEMA_WARN_CHARS),
    ):
        if size > MAX_TOOL_TEXT_CHARS:
            found.append(
                LintFinding(
                    "error",
                    tool.name,
                    f"oversized-{what}",
                    f"the {what} is {size:,} characters, over the limit of "
                    f"{MAX_TOOL_TEXT_CHARS:,}: a run refuses to send it to a model; shorten it",
                )
            )
        elif size > warn:
            found.append(
                LintFinding(
                    "warning",
                    tool.name,
                    f"long-{what}",
                    f"the {what} is {size:,} characters (over {warn:,}): it is sent with every "
                    "request and crowds the model's context; shorten it",
                )
            )
    return found


def _description(tool: McpTool) -> list[LintFinding]:
    text = (tool.description or "").strip()
    if not text:
        return [
            LintFinding(
                "error",
                tool.name,
                "missing-description",
                "no description: the model picks tools by it; say what the tool does and when "
                "to use it",
            )
        ]
    words = re.findall(r"\w+", text)
    plain = text.lower().rstrip(".")
    if (
        len(words) < MIN_DESCRIPTION_WORDS
        or plain in _VAGUE
        or plain == tool.name.lower().replace("_", " ")
    ):
        return [
            LintFinding(
                "warning",
                tool.name,
                "vague-description",
                f"the description {text[:80]!r} is too vague to choose the tool by: say what "
                f"it does, with what, and when to use it (at least {MIN_DESCRIPTION_WORDS} words)",
            )
        ]
    return []


def _schema(tool: McpTool) -> list[LintFinding]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = tool.input_schema
    if not isinstance(schema, dict):
        return [_bad_schema(tool, f"the input schema is {type(schema).__name__}, not an object")]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the root"
        return [_bad_schema(tool, f"not a valid JSON Schema at {where}: {exc.message[:200]}")]
    if schema.get("type") != "object":
        return [_bad_schema(tool, "the input schema's root must be type: object")]
    found: list[LintFinding] = []
    properties = schema.get("properties") or {}
    for name, prop in properties.items() if isinstance(properties, dict) else ():
        if isinstance(prop, dict) and not str(prop.get("description") or "").strip():
            found.append(
                LintFinding(
                    "warning",
                    tool.name,
                    "undescribed-argument",
                    f"argument {name!r} has no description: say what value it takes",
                )
            )
    required = schema.get("required") or []
    missing = [r for r in required if isinstance(r, str) and r not in properties]
    if missing:
        found.append(
            _bad_schema(tool, f"required argument {missing[0]!r} is not among the properties")
        )
    return found


def _bad_schema(tool: McpTool, why: str) -> LintFinding:
    return LintFinding("error", tool.name, "invalid-schema", f"{why}; a model cannot call it right")
