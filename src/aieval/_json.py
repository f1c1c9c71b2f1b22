"""Strict JSON reading: a key given twice in one object is an error, never "the last one wins".

``json.loads`` keeps the last of two equal keys silently, so a policy with ``alpha`` twice or a
dataset row with ``expected`` twice would quietly lose a value the user wrote.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

__all__ = ["DuplicateKeyError", "load_strict", "loads_strict", "unique_keys"]


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice; ``key`` is that key."""

    def __init__(self, key: str, message: str | None = None) -> None:
        super().__init__(message or f"duplicate key {key!r} in one JSON object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a repeated key with :class:`DuplicateKeyError`."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def loads_strict(text: str | bytes) -> Any:
    """``json.loads`` that raises :class:`DuplicateKeyError` (a ``ValueError``) on a repeated key.

    >>> loads_strict('{"a": 1, "b": {"c": 2}}')
    {'a': 1, 'b': {'c': 2}}
    >>> loads_strict('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ...
    aieval._json.DuplicateKeyError: duplicate key 'a' in one JSON object
    """
    return json.loads(text, object_pairs_hook=unique_keys)


def load_strict(handle: TextIO) -> Any:
    """:func:`loads_strict` for an open text file."""
    return json.load(handle, object_pairs_hook=unique_keys)
