"""A word-level diff of two outputs, as segments the viewer renders as text."""

from __future__ import annotations

import difflib
import re
from typing import Any

__all__ = ["text_diff"]

_TOKENS = re.compile(r"\s+|[^\s]+")
#: Beyond this many tokens a side, the diff is skipped (it would be slow and unreadable).
_MAX_TOKENS = 20_000


def text_diff(before: Any, after: Any) -> dict[str, Any]:
    """Segments ``[op, text]`` (``equal``, ``delete``, ``insert``) turning ``before`` into
    ``after``, word by word, and whether the texts are identical.

    >>> text_diff("the cat sat", "the dog sat")["segments"]
    [['equal', 'the '], ['delete', 'cat'], ['insert', 'dog'], ['equal', ' sat']]
    """
    a, b = _text(before), _text(after)
    left, right = _TOKENS.findall(a), _TOKENS.findall(b)
    if len(left) > _MAX_TOKENS or len(right) > _MAX_TOKENS:
        return {"identical": a == b, "segments": None, "skipped": "texts too long to diff"}
    segments: list[list[str]] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("equal", "delete", "replace") and i2 > i1:
            _add(segments, "equal" if op == "equal" else "delete", "".join(left[i1:i2]))
        if op in ("insert", "replace") and j2 > j1:
            _add(segments, "insert", "".join(right[j1:j2]))
    return {"identical": a == b, "segments": segments, "skipped": None}


def _add(segments: list[list[str]], op: str, text: str) -> None:
    if segments and segments[-1][0] == op:
        segments[-1][1] += text
    else:
        segments.append([op, text])


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, indent=2, default=str)
