"""Strict JSON reading: a key given twice in one object is an error, never "the last one wins".

``json.loads`` keeps the last of two equal keys silently, so a policy with ``alpha`` twice or a
dataset row with ``expected`` twice would quietly lose a value the user wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TextIO

try:  # the ``traces`` extra's fast parser: a dataset's rows are read with it when installed
    import msgspec
except ImportError:  # pragma: no cover - the extra is missing
    msgspec = None  # type: ignore[assignment]

__all__ = [
    "DuplicateKeyError",
    "deep_line",
    "duplicate_key_path",
    "load_strict",
    "loads_strict",
    "loads_strict_line",
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


#: msgspec's decoder (``None`` without the ``traces`` extra), built once.
_FAST: Any = msgspec.json.Decoder() if msgspec is not None else None
_FAST_ERROR: type[Exception] = msgspec.DecodeError if msgspec is not None else ValueError


def loads_strict_line(text: str) -> Any:
    """:func:`loads_strict` of one line of JSON text, the same value and the same errors, by
    msgspec's decoder when it is installed (a dataset's rows are read line by line with it).

    msgspec keeps the last of two equal keys, so its value is kept only when it holds as many
    strings as the text has: every repeated key would be a string of the text missing from
    the value. Any other text (a repeated key, an error, NaN, which msgspec refuses) is read
    again by :func:`loads_strict`, which names the error.

    >>> loads_strict_line('{"a": [1, "b"], "c": {"d": null}}')
    {'a': [1, 'b'], 'c': {'d': None}}
    """
    if _FAST is not None:
        try:
            value = _FAST.decode(text)
        except _FAST_ERROR:
            pass
        else:
            if _strings(value) == _quoted(text):
                return value
    return loads_strict(text)


def _quoted(text: str) -> int:
    """How many strings the valid JSON ``text`` holds: half its quotes that no backslash
    escapes (escapes pair backslashes from the left, as ``str.replace`` does)."""
    if "\\" not in text:
        return text.count('"') // 2
    bare = text.replace("\\\\", "")
    return (bare.count('"') - bare.count('\\"')) // 2


def _strings(value: Any) -> int:
    """How many strings ``value`` holds, its objects' keys among them (walked without
    recursion: any depth is safe)."""
    if type(value) is dict:
        kinds = list(map(type, value.values()))
        if dict not in kinds and list not in kinds:
            return len(kinds) + kinds.count(str)  # a flat row: the common case, told at once
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            count += len(node)
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
        elif type(node) is str:
            count += 1
    return count


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
