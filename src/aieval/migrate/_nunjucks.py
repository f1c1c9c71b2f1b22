"""The part of nunjucks (promptfoo's template language) that has an exact aieval equivalent:
``{{ name }}`` and ``{{ name.key }}`` substitutions. Anything else (tags, comments, filters,
expressions) is refused naming the construct and its line, never rendered differently."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from aieval.errors import ConfigError

__all__ = ["MAX_RENDERED", "js_text", "render", "to_format", "variables"]

#: Longest text a template renders to: a short value naming a 1 MB variable many times would
#: otherwise grow without bound, once per test.
MAX_RENDERED = 1_000_000

# a nunjucks tag: {{ ... }}, {% ... %} or {# ... #}
_TAG = re.compile(r"\{\{(?P<out>.*?)\}\}|\{%(?P<block>.*?)%\}|\{#(?P<comment>.*?)#\}", re.S)
_NAME = r"[A-Za-z_$][A-Za-z0-9_$]*"
_PATH = re.compile(rf"\s*(?P<path>{_NAME}(?:\.{_NAME})*)\s*")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _parts(text: str, where: str) -> list[str | tuple[str, ...]]:
    """The template as literal texts and variable paths; refuses what is not a plain path."""
    parts: list[str | tuple[str, ...]] = []
    start = 0
    for match in _TAG.finditer(text):
        construct = match.group(0)
        line = _line(text, match.start())
        if match.group("block") is not None:
            raise ConfigError(
                f"{where}, line {line}: nunjucks tag {construct!r} (loops, conditions, set, "
                "include) has no aieval equivalent; render it away or write the prompt out"
            )
        if match.group("comment") is not None:
            raise ConfigError(
                f"{where}, line {line}: nunjucks comment {construct!r} is not translated; "
                "remove it from the template"
            )
        found = _PATH.fullmatch(match.group("out"))
        if found is None:
            raise ConfigError(
                f"{where}, line {line}: {construct!r} is not a plain variable (filters, "
                "expressions and calls are not translated); only {{ name }} and "
                "{{ name.key }} are"
            )
        parts.append(text[start : match.start()])
        parts.append(tuple(found.group("path").split(".")))
        start = match.end()
    parts.append(text[start:])
    return parts


def variables(text: str, where: str) -> list[tuple[str, ...]]:
    """The variable paths ``text`` uses, in order (refusing what is not translated)."""
    return [part for part in _parts(text, where) if isinstance(part, tuple)]


def to_format(text: str, where: str, *, field: str = "vars") -> str:
    """``text`` as a ``str.format`` template over the row field ``field``:
    ``{{ language }}`` becomes ``{vars[language]}``, literal braces are doubled."""
    out: list[str] = []
    for part in _parts(text, where):
        if isinstance(part, str):
            out.append(part.replace("{", "{{").replace("}", "}}"))
        else:
            out.append("{" + field + "".join(f"[{key}]" for key in part) + "}")
    return "".join(out)


def render(text: str, values: Mapping[str, Any], where: str) -> str:
    """``text`` with each ``{{ path }}`` replaced by its value as nunjucks prints it; a missing
    variable is refused (nunjucks would print nothing, silently), and so is a result longer
    than :data:`MAX_RENDERED` characters."""
    out: list[str] = []
    size = 0
    for part in _parts(text, where):
        if isinstance(part, str):
            out.append(part)
            size += len(part)
            continue
        value: Any = values
        for key in part:
            if not isinstance(value, Mapping) or key not in value:
                raise ConfigError(f"{where}: template variable {'.'.join(part)!r} is not set")
            value = value[key]
        out.append(js_text(value, f"{where}: variable {'.'.join(part)!r}"))
        size += len(out[-1])
        if size > MAX_RENDERED:
            raise ConfigError(
                f"{where}: the template renders to more than {MAX_RENDERED:,} characters"
            )
    return "".join(out)


def js_text(value: Any, what: str) -> str:
    """``value`` as JavaScript's ``String(value)`` prints a scalar; an object or a list is
    refused (nunjucks prints ``[object Object]`` or joins a list: rarely what was meant)."""
    if isinstance(value, (dict, list)):
        raise ConfigError(
            f"{what} is a {'list' if isinstance(value, list) else 'mapping'}; a template "
            "variable must be text or a number (use {{ name.key }} for a mapping's field)"
        )
    if isinstance(value, date):  # a datetime too: a JavaScript Date prints in local time
        raise ConfigError(f"{what} is a date, which JavaScript prints otherwise; quote it as text")
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
