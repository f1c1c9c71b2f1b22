"""Text from data shown on a terminal or in a report: control characters escaped, never run.

Sample ids, answers, run names and error messages come from users and models. An ANSI escape
(``\\x1b[2J``), a carriage return, NUL, other C0/C1 controls, or a bidirectional override
(U+202E) would be interpreted by the terminal or reorder what a reviewer reads. Every renderer
passes such text through :func:`printable`, which shows those characters as Python-style escapes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["escape_markdown", "printable", "printable_data", "printable_lines"]

# C0 controls (tab and newline too: they would break one-line fields), DEL and C1 controls,
# bidirectional marks, embeddings, overrides and isolates, zero-width and line/paragraph
# separators, the BOM, and lone surrogates (JSON's "\udc80" read as text: no UTF-8 terminal or
# file can take one, so printing it raised).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def printable(text: object) -> str:
    """``str(text)`` with every control or bidi character shown as an escape.

    Example:
        >>> printable("ok\\x1b[31m red \\u202eevil\\x00")
        'ok\\\\x1b[31m red \\\\u202eevil\\\\x00'
        >>> printable("lone \\udc80 surrogate")
        'lone \\\\udc80 surrogate'
        >>> printable("plain text, accents é and emoji ✓ stay")
        'plain text, accents é and emoji ✓ stay'
    """
    return _UNSAFE.sub(_escape, str(text))


def printable_lines(text: object) -> str:
    """:func:`printable` of each line of ``text``, its line breaks kept.

    For a message of several lines (``file: 2 problems:`` then one ``  - ...`` line each): every
    other control character in it is still shown as an escape.

    Example:
        >>> printable_lines("2 problems:\\n  - bad \\x1b[2J")
        '2 problems:\\n  - bad \\\\x1b[2J'
    """
    return "\n".join(printable(line) for line in str(text).split("\n"))


def printable_data(value: Any) -> Any:
    """``value`` with :func:`printable` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable_data(v) for v in value]
    return value


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_markdown(text: Any) -> str:
    """Text safe inside a Markdown table cell: no HTML, no table breaks, no emphasis.

    >>> escape_markdown("a|b <script>*x*</script>")
    'a\\\\|b &lt;script&gt;\\\\*x\\\\*&lt;/script&gt;'
    """
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "\\`*_[]|#~":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def escape_github(text: Any) -> str:
    """:func:`escape_markdown`, and no ``@`` mention: on GitHub ``@name`` notifies a user, so
    a zero-width space follows each ``@``.

    >>> escape_github("ask @octocat | <!-- x -->")
    'ask @\\u200boctocat \\\\| &lt;!-- x --&gt;'
    """
    return escape_markdown(text).replace("@", "@\u200b")
