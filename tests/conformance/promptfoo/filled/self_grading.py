"""The self-grading example's defaultTest assertions, written in Python as a user would after
``aieval import promptfoo`` (the stubs of its promptfoo_checks.py, same names)."""

from __future__ import annotations

from typing import Any

from aieval import Score
from aieval.scorers import scorer


@scorer(name="pf_llm_rubric_1")
def pf_llm_rubric_1(prediction: Any, expected: Any = None) -> Score:
    """llm-rubric: graded by a model in promptfoo; offline it is not applicable here."""
    return Score(None, reason="graded by an LLM; not graded offline")


@scorer(name="pf_javascript_2")
def pf_javascript_2(prediction: Any, expected: Any = None) -> Score:
    """Math.max(0, Math.min(1, 1 - (output.length - 100) / 900)): a number, which promptfoo
    passes when above 0 (no threshold given)."""
    value = max(0.0, min(1.0, 1 - (len(prediction or "") - 100) / 900))
    return Score(1.0 if value > 0 else 0.0, raw=value, reason=f"length score {value:.3f}")
