"""The json-output example's JavaScript assertions, written in Python as a user would after
``aieval import promptfoo`` (the stubs of its promptfoo_checks.py, same names)."""

from __future__ import annotations

import json
from typing import Any

from aieval import Score
from aieval.scorers import scorer

COUNTRIES = ["Guatemala", "Costa Rica", "India", "Indonesia"]


def _parsed(text: Any) -> Any:
    """``JSON.parse(output)``: ``None`` when it would throw (promptfoo fails the test then)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def _includes(value: Any, item: str) -> bool:
    """JavaScript's ``value.includes(item)`` on an array or a string (else it throws)."""
    return isinstance(value, (list, str)) and item in value


@scorer(name="pf_javascript_1")
def pf_javascript_1(prediction: Any, expected: Any = None) -> Score:
    """JSON.parse(output).color === 'yellow' && JSON.parse(output).countries.includes('Ecuador')"""
    data = _parsed(prediction)
    if not isinstance(data, dict):
        return Score(0.0, reason="not a JSON object")
    ok = data.get("color") == "yellow" and _includes(data.get("countries"), "Ecuador")
    return Score(float(ok), reason=f"yellow and Ecuador: {ok}")


@scorer(name="pf_javascript_2")
def pf_javascript_2(prediction: Any, expected: Any = None) -> Score:
    """output.color === 'purple' && output.countries.includes('Brazil'), after JSON.parse."""
    data = _parsed(prediction)
    if not isinstance(data, dict):
        return Score(0.0, reason="not a JSON object")
    ok = data.get("color") == "purple" and _includes(data.get("countries"), "Brazil")
    return Score(float(ok), reason=f"purple and Brazil: {ok}")


@scorer(name="pf_contains_any_3")
def pf_contains_any_3(prediction: Any, expected: Any = None) -> Score:
    """contains-any of COUNTRIES in output.countries (as promptfoo prints a non-text value)."""
    data = _parsed(prediction)
    if not isinstance(data, dict) or "countries" not in data:
        return Score(0.0, reason="no countries")
    countries = data["countries"]
    text = countries if isinstance(countries, str) else json.dumps(countries, separators=(",", ":"))
    found = [c for c in COUNTRIES if c in text]
    return Score(float(bool(found)), reason=f"found {found}")
