"""Strict JSON reading: a key given twice in one object is an error, never "the last one wins".

``json.loads`` keeps the last of two equal keys silently, so a policy with ``alpha`` twice or a
dataset row with ``expected`` twice would quietly lose a value the user wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TextIO

__all__ = [
    "DuplicateKeyError",
    "deep_line",
    "duplicate_key_path",
    "load_strict",
    "loads_strict",
    "too_deep",
    "unique_keys",
]


#: A JSON string (skipped whole), a bracket or a line break: what :func:`deep_line` counts.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')


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
    if isinstance(text, str):
        return _STRICT.decode(text)  # json.loads would build a decoder per call
    return json.loads(text, object_pairs_hook=unique_keys)


#: The decoder :func:`loads_strict` uses for text, built once (it keeps no state between calls).
_STRICT = json.JSONDecoder(object_pairs_hook=unique_keys)


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


def too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` holds objects or arrays more than ``limit`` levels deep (``value``
    itself is level 1). Walks without recursion, so any depth is safe to ask about.

    >>> too_deep({"a": [1, {"b": []}]}, 3), too_deep({"a": [1, {"b": []}]}, 4)
    (True, False)
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (Mapping, list, tuple)))
    return False


def deep_line(text: str, limit: int) -> int | None:
    """The 1-based line of ``text`` (JSON) where objects and arrays first nest more than
    ``limit`` deep, or ``None``: where to point at a file the decoder gave up on."""
    depth, line = 0, 1
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > limit:
                return line
        elif token in "]}":
            depth -= 1
        # a string token is skipped whole: JSON escapes the line breaks inside one
    return None
