"""Lossless storage of any Python text, lone surrogates included.

SQLite stores text as UTF-8, which cannot hold a lone surrogate such as ``"\\udc80"`` (what a
non-UTF-8 byte becomes under ``surrogateescape``, or what a model's broken escape decodes to).
Such a string is stored instead as a BLOB of its ``surrogatepass`` UTF-8 bytes, and every value
read back as bytes is decoded the same way: the store's one other BLOB column (the bodies of
``received_requests``) is read without this decoding, so the round trip is exact. JSON columns
escape the surrogate as ``\\udc80``, which ``json.loads`` restores.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "PG_MARKER",
    "dumps",
    "encodable",
    "from_db",
    "from_pg",
    "loads",
    "row_from_db",
    "to_db",
    "to_db_row",
    "to_db_rows",
    "to_pg",
    "to_pg_row",
    "unescaped",
]


def encodable(text: str) -> bool:
    """Whether UTF-8 holds ``text`` (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def to_db(value: Any) -> Any:
    """A parameter for SQLite: a string UTF-8 cannot hold becomes its surrogatepass bytes."""
    if isinstance(value, str) and not encodable(value):
        return value.encode("utf-8", "surrogatepass")
    return value


def to_db_row(values: Iterable[Any]) -> tuple[Any, ...]:
    """:func:`to_db` over a row of parameters."""
    return tuple(to_db(v) for v in values)


def to_db_rows(rows: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    """:func:`to_db_row` over many rows; ``rows`` as they are when UTF-8 holds all their text.

    One test of all the batch's text at C speed (the common case) instead of one per value:
    UTF-8 holds the texts joined exactly when it holds each (a surrogate is refused alone or
    beside another).
    """
    if encodable("".join([v for row in rows for v in row if isinstance(v, str)])):
        return rows
    return [to_db_row(row) for row in rows]


def from_db(value: Any) -> Any:
    """A value read from SQLite: bytes written by :func:`to_db` become the original string."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


def row_from_db(_cursor: Any, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A ``row_factory`` applying :func:`from_db` to every column (rows without bytes, nearly
    all of them, are returned as they are, checked at C speed)."""
    if bytes in map(type, row):
        return tuple(from_db(v) for v in row)
    return row


#: ``json.dumps(value, ensure_ascii=..., default=str)`` builds an encoder per call; these two
#: are built once (the same text: an encoder keeps no state between calls).
_UNESCAPED = json.JSONEncoder(ensure_ascii=False, default=str)
_ESCAPED = json.JSONEncoder(ensure_ascii=True, default=str)


def unescaped(value: Any) -> str:
    """``value``'s JSON text with non-ASCII text as it is (what :func:`dumps` writes when UTF-8
    holds it)."""
    return _UNESCAPED.encode(value)


def dumps(value: Any) -> str:
    """JSON text that SQLite can store: unescaped UTF-8 when possible, else ASCII escapes."""
    text = _UNESCAPED.encode(value)
    if encodable(text):
        return text
    return _ESCAPED.encode(value)


def loads(text: str | None) -> Any:
    """The value of a JSON column; ``None`` for NULL."""
    return None if text is None else json.loads(text)


#: Marks a PostgreSQL text value stored escaped: ``text`` holds no NUL (``\x00``) nor lone
#: surrogate, so such a string (or one that happens to start with the marker) is stored as the
#: marker followed by its JSON string literal in ASCII, which :func:`from_pg` turns back.
PG_MARKER = "\ue000\x01esc:"


def to_pg(value: Any) -> Any:
    """A parameter for PostgreSQL: a string ``text`` cannot hold is stored marked and escaped."""
    if isinstance(value, str) and (
        "\x00" in value or value.startswith(PG_MARKER) or not encodable(value)
    ):
        return PG_MARKER + json.dumps(value, ensure_ascii=True)
    return value


def to_pg_row(values: Iterable[Any]) -> tuple[Any, ...]:
    """:func:`to_pg` over a row of parameters (a row whose texts are all ASCII without NUL,
    nearly every row, is returned as it is: the marker is not ASCII)."""
    row = tuple(values)
    for value in row:
        if isinstance(value, str) and (not value.isascii() or "\x00" in value):
            return tuple(to_pg(v) for v in row)
    return row


def from_pg(value: Any) -> Any:
    """A value read from PostgreSQL: a string written escaped by :func:`to_pg` is restored."""
    if isinstance(value, str) and value.startswith(PG_MARKER):
        return json.loads(value[len(PG_MARKER) :])
    return value
