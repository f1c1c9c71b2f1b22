"""JSON answers that carry any stored text, lone surrogates included.

The store keeps text exactly, so a prediction may hold a lone surrogate (``"a\\udcffb"``, what
a non-UTF-8 byte becomes under ``surrogateescape``), which UTF-8 cannot encode. Such a
character is sent as its JSON escape ``\\udcff``: valid JSON that ``JSON.parse`` and
``json.loads`` read back as the same character. Every other character goes out as UTF-8, as
before; NUL is escaped (``\\u0000``) by JSON itself. A non-finite number (JSON has none) is
answered as ``null``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from fastapi.responses import JSONResponse

__all__ = ["SafeJSONResponse", "json_bytes"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_bytes(content: Any) -> bytes:
    """Compact UTF-8 JSON of ``content``; a lone surrogate becomes its ``\\uXXXX`` escape.

    >>> json_bytes({"prediction": "a\\udcffb", "nul": "x\\x00y", "word": "café"})
    b'{"prediction":"a\\\\udcffb","nul":"x\\\\u0000y","word":"caf\\xc3\\xa9"}'
    """
    try:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        # a non-finite number (stored by an older version or a local run, or a sum of huge
        # ones): JSON has no such number, so it is answered as null rather than a 500
        text = json.dumps(
            _finite(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # outside strings JSON text is ASCII: every surrogate here is inside a string
        return _SURROGATE.sub(_escaped, text).encode("utf-8")


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, infinities) replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class SafeJSONResponse(JSONResponse):
    """``JSONResponse`` whose body never fails on a lone surrogate (see :func:`json_bytes`)."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)
