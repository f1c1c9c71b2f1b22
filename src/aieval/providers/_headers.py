"""Checking user-given HTTP headers before any request carries them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aieval.errors import ConfigError

__all__ = ["check_headers", "sends_headers"]

# RFC 9110 field-name: a token
_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def check_headers(value: Any, field: str) -> dict[str, str]:
    """``value`` as a ``{name: value}`` dict of strings, or a :class:`ConfigError` naming ``field``.

    >>> check_headers({"X-Team": "evals"}, "headers")
    {'X-Team': 'evals'}
    """
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{field}: HTTP headers must be a mapping of name to value, got {type(value).__name__}"
        )
    checked: dict[str, str] = {}
    for name, text in value.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(f"{field}: {name!r} is not a valid HTTP header name")
        if not isinstance(text, str):
            raise ConfigError(
                f"{field}.{name}: a header value must be a string, got {type(text).__name__}"
            )
        if "\r" in text or "\n" in text:
            raise ConfigError(f"{field}.{name}: a header value cannot contain a line break")
        checked[name] = text
    return checked


def sends_headers(provider: Any) -> bool:
    """Whether ``provider`` (or the provider a wrapper holds in ``inner``) sends request headers."""
    seen = 0
    while provider is not None and seen < 16:
        if getattr(provider, "sends_headers", False) is True:
            return True
        provider = getattr(provider, "inner", None)
        seen += 1
    return False
