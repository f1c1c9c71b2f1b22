"""What a text scorer compares against: one expected text, or several accepted answers.

A list (tuple, set) ``expected`` is several accepted answers, never one text: comparing
``"['Paris', 'paris']"`` as a string would score every prediction 0 without a word of warning.
A mapping has no text to compare and is refused, as is an empty list (nothing is accepted), and
so is no ``expected`` at all (``None``, a row without one): comparing with ``""`` would score an
empty prediction 1.0 on every unlabelled row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aieval._types import Score
from aieval.errors import ScorerError

__all__ = ["as_best_of_score", "best_of", "expected_texts", "require_expected", "text_of"]

_MANY = (list, tuple, set, frozenset)
_SHOWN = 60


def text_of(value: Any) -> str:
    """``None`` as empty text, a string as itself, a number (or other scalar) as its ``str()``."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def require_expected(expected: Any, scorer: str) -> None:
    """Refuse a missing reference (``None``): a scorer that compares needs something to compare.

    Raises:
        ScorerError: ``expected`` is ``None``; recorded as that sample's error for ``scorer``.
    """
    if expected is None:
        raise ScorerError(
            f"scorer {scorer!r}: no expected answer for this example; give the row an "
            "'expected', or score unlabelled rows with a scorer that needs none"
        )


def expected_texts(expected: Any, scorer: str) -> list[str]:
    """The accepted answers in ``expected``: one text, or each item of a list/tuple/set.

    Raises:
        ScorerError: ``expected`` is missing (``None``), or it (or one of its items) is a
            mapping or a nested list, or it is an empty list; the message names the scorer and
            the type.

    >>> expected_texts(["Paris", "paris"], "exact_match")
    ['Paris', 'paris']
    >>> expected_texts(42, "exact_match")
    ['42']
    """
    require_expected(expected, scorer)
    if isinstance(expected, _MANY):
        items = sorted(expected, key=repr) if isinstance(expected, set | frozenset) else expected
        if not items:
            raise ScorerError(
                f"{scorer}: expected is an empty {type(expected).__name__}: no accepted answer "
                "to compare with"
            )
        for i, item in enumerate(items):
            if isinstance(item, (Mapping, *_MANY)):
                raise ScorerError(
                    f"{scorer}: expected[{i}] is a {type(item).__name__}; accepted answers must "
                    "be texts (or numbers)"
                )
        return [text_of(item) for item in items]
    if isinstance(expected, Mapping):
        raise ScorerError(
            f"{scorer}: expected is a {type(expected).__name__}, which has no text to compare; "
            "give a string, or a list of accepted answers"
        )
    return [text_of(expected)]


def best_of(
    metric: Callable[[str], float], expected: Any, scorer: str
) -> tuple[float, int, list[str]]:
    """``(best value, index of the answer that gave it, answers)`` over the accepted answers."""
    answers = expected_texts(expected, scorer)
    values = [metric(answer) for answer in answers]
    best = max(range(len(values)), key=values.__getitem__)  # the first of equal bests
    return values[best], best, answers


def as_best_of_score(value: float, best: int, answers: list[str]) -> Score:
    """The score of a list ``expected``, saying which accepted answer counted."""
    shown = answers[best]
    if len(shown) > _SHOWN:
        shown = shown[: _SHOWN - 3] + "..."
    return Score(
        value,
        reason=f"best of {len(answers)} accepted answers: {shown!r}",
        metadata={"accepted_answers": len(answers), "best_answer": best},
    )
