"""Custom scorers for the quickstart evals: plain functions with ``@scorer``."""

import re

from aieval import Score, scorer

_ORDER = re.compile(r"#?\b([A-Z]{0,3}-?\d{5,})\b")


@scorer
def references_order(prediction: str, _expected: str, *, prompt: str | None = None) -> Score:
    """1.0 when the reply repeats the order number the customer gave; unscored when none given."""
    numbers = _ORDER.findall(prompt or "")
    if not numbers:
        return Score(None, reason="the question names no order number")
    found = any(number in prediction for number in numbers)
    return Score(1.0 if found else 0.0, reason=None if found else f"never mentions {numbers[0]}")


@scorer(name="concise")
def _concise(prediction: str, _expected: str) -> float:
    """Full marks up to 60 words, then linearly down to 0 at 180 words."""
    words = len(prediction.split())
    return max(0.0, min(1.0, (180 - words) / 120))
