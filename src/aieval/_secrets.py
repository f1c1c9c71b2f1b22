"""Which mapping keys name credentials, so their values are never stored or shown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_key", "without_secrets"]

REDACTED = "[redacted]"

_SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "authorization",
        "headers",
        "password",
        "secret",
        "token",
        "access_token",
        "refresh_token",
        "client_secret",
        "cookie",
        "x_api_key",
    }
)
_SECRET_SUFFIXES = ("_api_key", "_secret", "_password", "_token", "_apikey")
# Token *counts* are data, not credentials.
_NOT_SECRET = frozenset({"input_tokens", "output_tokens", "total_tokens", "max_tokens"})


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a credential (its value is never shown).

    >>> is_secret_key("api_key"), is_secret_key("X-Api-Key"), is_secret_key("input_tokens")
    (True, True, False)
    """
    name = key.lower().replace("-", "_")
    if name in _NOT_SECRET:
        return False
    return name in _SECRET_KEYS or name.endswith(_SECRET_SUFFIXES)


def without_secrets(data: Any) -> Any:
    """A copy of JSON-like ``data`` with the values of credential keys replaced.

    >>> without_secrets({"temperature": 0, "api_key": "sk-1", "headers": {"X": "y"}})
    {'temperature': 0, 'api_key': '[redacted]', 'headers': '[redacted]'}
    """
    if isinstance(data, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and is_secret_key(k) else without_secrets(v)
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [without_secrets(item) for item in data]
    return data
