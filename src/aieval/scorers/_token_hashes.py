"""When rapidfuzz may compare tokens by its hash values and still compare them by text.

rapidfuzz's sequence functions turn each element of a list of strings into one 64-bit value (a
one-character string its code point, any other string its ``hash()``) and compare those values:
two different tokens with one value would count as equal. A token is *admitted* once its values
are held by no other admitted token, so over admitted tokens equal values mean equal text. A
token that would share a value with an admitted one is never admitted, and every pair holding it
is compared the exact (slower) way.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

__all__ = ["distinct_by_hash"]

#: Admitted tokens kept at most (then a fresh set starts), so memory stays bounded.
_LIMIT = 1 << 16
_UINT64 = (1 << 64) - 1


class _Admitted:
    """Admitted tokens and the token each value belongs to (replaced whole, never cleared)."""

    __slots__ = ("owners", "tokens")

    def __init__(self) -> None:
        self.tokens: set[str] = set()
        self.owners: dict[int, str] = {}


_admitted = _Admitted()
_lock = threading.Lock()


def distinct_by_hash(pred: list[str], ref: list[str]) -> bool:
    """Whether comparing these tokens by rapidfuzz's values is comparing them by text."""
    tokens = _admitted.tokens  # one set for the whole check, even if another thread swaps it
    if tokens.issuperset(pred) and tokens.issuperset(ref):
        return True
    return _admit(pred, ref)


def _values(token: str) -> tuple[int, ...]:
    """The values rapidfuzz may give a token (a one-character one either way it could)."""
    hashed = hash(token) & _UINT64
    return (ord(token), hashed) if len(token) == 1 else (hashed,)


def _admit(*token_lists: Iterable[str]) -> bool:
    """Admit the new tokens; False if one of them shares a value with another token."""
    global _admitted
    with _lock:
        admitted = _admitted
        if len(admitted.tokens) >= _LIMIT:
            admitted = _admitted = _Admitted()
        owners = admitted.owners
        distinct = True
        for tokens in token_lists:
            for token in set(tokens).difference(admitted.tokens):
                values = _values(token)
                if any(owners.get(value, token) != token for value in values):
                    distinct = False  # a collision: this token is never admitted
                    continue
                for value in values:
                    owners[value] = token
                admitted.tokens.add(token)
        return distinct
