"""Scorers: per-sample metrics returning a float in 0..1.

Built-ins: :func:`exact_match`, :func:`json_valid`, :func:`rouge_l`, :func:`token_f1` and the
judge factory :func:`llm_judge`. Write your own with :func:`scorer`.
"""

from aieval.scorers._judge import JUDGE_PROMPT_VERSION, VERDICT_SCHEMA, llm_judge
from aieval.scorers._scorer import (
    CONTEXT_PARAMETERS,
    Scorer,
    get_scorer,
    registered_scorers,
    scorer,
)
from aieval.scorers._text import exact_match, json_valid, rouge_l, token_f1
from aieval.scorers._verdict import Verdict, parse_verdict

__all__ = [
    "CONTEXT_PARAMETERS",
    "JUDGE_PROMPT_VERSION",
    "VERDICT_SCHEMA",
    "Scorer",
    "Verdict",
    "exact_match",
    "get_scorer",
    "json_valid",
    "llm_judge",
    "parse_verdict",
    "registered_scorers",
    "rouge_l",
    "scorer",
    "token_f1",
]
