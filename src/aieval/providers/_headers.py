"""Checking user-given HTTP headers before any request carries them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aieval.errors import ConfigError

__all__ = ["check_headers", "sends_headers"]

# RFC 9110 field-name: a token
_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# RFC 9110 field-value: visible characters, obs-text, space and tab; every other control
# character is refused (CR and LF would end the header, NUL is never sent)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def check_headers(value: Any, field: str, *, ascii_only: bool = False) -> dict[str, str]:
    """``value`` as a ``{name: value}`` dict of strings, or a :class:`ConfigError` naming
    ``field.<name>`` (never showing a value: it may be a secret).

    Names must be RFC 9110 tokens, given once (names ignore case); values must be strings
    without control characters (CR, LF, NUL, ...; a tab is allowed) and without leading or
    trailing whitespace, which HTTP clients strip. ``ascii_only`` refuses non-ASCII values too,
    for an HTTP client that cannot send them.

    >>> check_headers({"X-Team": "evals"}, "headers")
    {'X-Team': 'evals'}
    """
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{field}: HTTP headers must be a mapping of name to value, got {type(value).__name__}"
        )
    checked: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name, text in value.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(_bad_name(name, field))
        where = f"{field}.{name}"
        if name.lower() in seen:
            raise ConfigError(
                f"{where}: given twice (also as {seen[name.lower()]!r}); HTTP header names "
                "ignore case, so both would be sent and the server would pick one"
            )
        seen[name.lower()] = name
        if not isinstance(text, str):
            raise ConfigError(
                f"{where}: a header value must be a string, got {type(text).__name__}"
            )
        problem = _value_problem(text, ascii_only)
        if problem:
            raise ConfigError(f"{where}: a header value cannot {problem} (the value is not shown)")
        checked[name] = text
    return checked


def _bad_name(name: Any, field: str) -> str:
    rule = (
        "not a valid HTTP header name (an RFC 9110 token: letters, digits and "
        "!#$%&'*+-.^_`|~; no spaces, colons or control characters)"
    )
    if not isinstance(name, str):
        return f"{field}: a header name must be a string, got {type(name).__name__}"
    if ":" in name:  # maybe a whole "Name: value" line: the text after ':' may be a secret
        head = name.partition(":")[0]
        return (
            f"{field}.{head!r}: {rule}; it holds ':' (give the name alone and the value as its "
            "value; the text after ':' is not shown)"
        )
    return f"{field}.{name!r}: {rule}"


def _value_problem(text: str, ascii_only: bool) -> str | None:
    control = _CONTROL.search(text)
    if control:
        char = control.group()
        if char in "\r\n":
            return "contain a line break (CR or LF)"
        return f"contain the control character U+{ord(char):04X}"
    if text != text.strip(" \t"):
        return (
            "begin or end with whitespace: HTTP clients strip it, so the server would see "
            "a different value"
        )
    if ascii_only and not text.isascii():
        return "hold non-ASCII text: this provider's HTTP client sends header values as ASCII"
    return None


def sends_headers(provider: Any) -> bool:
    """Whether ``provider`` (or the provider a wrapper holds in ``inner``) sends request headers."""
    seen = 0
    while provider is not None and seen < 16:
        if getattr(provider, "sends_headers", False) is True:
            return True
        provider = getattr(provider, "inner", None)
        seen += 1
    return False
