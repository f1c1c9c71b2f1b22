"""The standalone-assertions example's untranslated assertions, written in Python as a user
would after ``aieval import promptfoo`` (the stubs of its promptfoo_checks.py, same names)."""

from __future__ import annotations

from typing import Any

from aieval import Score
from aieval.scorers import scorer


@scorer(name="pf_javascript_1")
def pf_javascript_1(prediction: Any, expected: Any = None) -> Score:
    """1 / (output.length + 1): a number, which promptfoo passes when above 0."""
    value = 1 / (len(prediction or "") + 1)
    return Score(1.0 if value > 0 else 0.0, raw=value, reason=f"brevity {value:.3f}")


@scorer(name="pf_model_graded_closedqa_2")
def pf_model_graded_closedqa_2(prediction: Any, expected: Any = None) -> Score:
    """model-graded-closedqa: graded by a model in promptfoo; offline it is not applicable."""
    return Score(None, reason="graded by an LLM; not graded offline")
