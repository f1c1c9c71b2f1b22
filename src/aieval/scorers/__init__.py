"""Scorers: per-sample metrics returning a float in 0..1.

Built-ins: :func:`exact_match`, :func:`json_valid`, :func:`rouge_l`, :func:`token_f1` and the
judge factory :func:`llm_judge`. Write your own with :func:`scorer`.
"""

from aieval.scorers._scorer import (
    CONTEXT_PARAMETERS,
    Scorer,
    get_scorer,
    registered_scorers,
    scorer,
)
from aieval.scorers._text import exact_match, json_valid, rouge_l, token_f1

__all__ = [
    "CONTEXT_PARAMETERS",
    "Scorer",
    "exact_match",
    "get_scorer",
    "json_valid",
    "registered_scorers",
    "rouge_l",
    "scorer",
    "token_f1",
]
