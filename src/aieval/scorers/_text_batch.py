"""Batch implementations of ``exact_match``, ``token_f1`` and ``json_valid``.

Each scores many rows in one call with the per-pair function's own arithmetic, in a tight loop
over the rows of two strings (the common case); any other row (a list of accepted answers, a
number, ``None``, a mapping) goes through the per-pair function itself, its failure kept as that
row's value. So every row's result is exactly what one call would return or raise.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from aieval.errors import ScorerError
from aieval.scorers._text import (
    _squad_em,
    _squad_f1,
    _token_f1,
    _token_f1_cased,
    exact_match,
    json_valid,
    token_f1,
)
from aieval.scorers._tokens import Normalization

__all__: list[str] = []

_Pair = Callable[[str, str], Any]


def rows(
    one: Callable[[Any, Any], Any],
    pair: _Pair | None,
    name: str,
    predictions: Sequence[Any],
    expected: Sequence[Any],
) -> list[Any]:
    """``pair(p, e)`` for each row of two strings, ``one(p, e)`` for any other row.

    ``one`` is the scorer's per-pair function with its options bound; a row it fails on gets
    the :class:`ScorerError` the runner would record for it (worded as ``Scorer.score`` does).
    ``pair=None``: every row through ``one``.
    """
    if pair is not None and set(map(type, predictions)) | set(map(type, expected)) <= {str}:
        return list(map(pair, predictions, expected))  # every row two strings: no row checks
    results: list[Any] = []
    for prediction, answer in zip(predictions, expected, strict=True):
        if pair is not None and type(prediction) is str and type(answer) is str:
            results.append(pair(prediction, answer))
            continue
        try:
            results.append(one(prediction, answer))
        except ScorerError as exc:
            results.append(exc)
        except Exception as exc:  # kept to this row
            error = ScorerError(f"scorer {name!r} raised {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            results.append(error)
    return results


def _exact(prediction: str, answer: str) -> float:
    # the per-pair rule (_text._exact), inlined: it is the whole cost of a row
    return 1.0 if prediction.strip() == answer.strip() else 0.0


@exact_match.batched
def _exact_match_batch(
    predictions: Sequence[Any], expected: Sequence[Any], *, normalize: Normalization = None
) -> list[Any]:
    """``exact_match`` over rows: the per-pair values, a row's failure as its value."""
    one = functools.partial(exact_match.fn, normalize=normalize)
    one("", "")  # an unsupported option is the caller's error, raised once, not per row
    pair = _exact if normalize is None else _squad_em
    return rows(one, pair, "exact_match", predictions, expected)


@token_f1.batched
def _token_f1_batch(
    predictions: Sequence[Any],
    expected: Sequence[Any],
    *,
    case_sensitive: bool = False,
    normalize: Normalization = None,
) -> list[Any]:
    """``token_f1`` over rows: the per-pair values, a row's failure as its value."""
    one = functools.partial(token_f1.fn, case_sensitive=case_sensitive, normalize=normalize)
    one("", "")  # an unsupported option is the caller's error, raised once, not per row
    if normalize is not None:
        pair: _Pair = _squad_f1
    else:
        pair = _token_f1_cased if case_sensitive else _token_f1
    return rows(one, pair, "token_f1", predictions, expected)


#: The characters a JSON text may start with after its leading whitespace (``json.loads``
#: also reads ``NaN``, ``Infinity`` and ``-Infinity``): any other text fails at its first
#: character, told here without the cost of raising and catching the decoder's error.
_JSON_FIRST = frozenset('{["-0123456789tfnNI')


def _parses(prediction: str, _answer: Any = None) -> float:
    start = prediction.lstrip(" \t\n\r")  # the whitespace json.loads skips, no other
    if not start or start[0] not in _JSON_FIRST:
        return 0.0
    try:
        json.loads(prediction)
    except (ValueError, RecursionError):
        return 0.0
    return 1.0


@json_valid.batched
def _json_valid_batch(predictions: Sequence[Any], expected: Sequence[Any]) -> list[Any]:
    """``json_valid`` over rows (``expected`` is not read)."""
    if set(map(type, predictions)) <= {str}:
        return list(map(_parses, predictions))
    return rows(json_valid.fn, None, "json_valid", predictions, expected)
