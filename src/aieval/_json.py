"""Strict JSON reading: a key given twice in one object is an error, never "the last one wins".

``json.loads`` keeps the last of two equal keys silently, so a policy with ``alpha`` twice or a
dataset row with ``expected`` twice would quietly lose a value the user wrote.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

__all__ = [
    "DuplicateKeyError",
    "duplicate_key_path",
    "load_strict",
    "loads_strict",
    "unique_keys",
]


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


class _Pairs(list[tuple[str, Any]]):
    """One JSON object's members in order, duplicates kept (for :func:`duplicate_key_path`)."""


def duplicate_key_path(text: str | bytes) -> str | None:
    """The dotted path of the first key given twice in one object of ``text``, or ``None``.

    Invalid JSON is ``None`` too: the caller's own parser reports it.

    >>> duplicate_key_path('{"settings": {"pass_threshold": 0.9, "pass_threshold": 0.1}}')
    'settings.pass_threshold'
    >>> duplicate_key_path('{"rows": [{"a": 1}, {"a": 2}]}') is None
    True
    """
    try:
        tree = json.loads(text, object_pairs_hook=_Pairs)
    except ValueError:
        return None
    return _first_duplicate(tree, [])


def _first_duplicate(node: Any, path: list[str]) -> str | None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, _value in node:
            if key in seen:
                return ".".join([*path, key])
            seen.add(key)
        for key, value in node:
            found = _first_duplicate(value, [*path, key])
            if found:
                return found
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found = _first_duplicate(item, [*path, str(index)])
            if found:
                return found
    return None
