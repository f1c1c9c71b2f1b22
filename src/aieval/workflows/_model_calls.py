"""A step's model calls: ``metadata.model_calls``, one entry per call the step made.

A run mapped from a trace lists each model-call span of a step there: ``{model, input_tokens,
output_tokens, cost, latency_s, error}`` (every key optional), as a recorded run may too. The
run's sample stores them as its target's calls, so its tokens and cost are those of its calls:
a call that reported no tokens (or no cost) makes the total unknown, never a partial sum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from aieval._records import CallRecord
from aieval._usage_figures import TokenTotal
from aieval.core import MAX_COUNT, count_out_of_range
from aieval.errors import WorkflowError

__all__ = ["MODEL_CALL_KEYS", "call_records", "checked_model_calls", "token_total", "unpriced"]

MODEL_CALL_KEYS = ("model", "input_tokens", "output_tokens", "cost", "latency_s", "error")


def checked_model_calls(metadata: dict[str, Any], where: str) -> dict[str, Any]:
    """``metadata`` with its ``model_calls`` checked: a list of objects of known keys, each
    value of its type; errors name ``where``, the entry and the key."""
    calls = metadata.get("model_calls")
    if calls is None:
        return metadata
    if not isinstance(calls, list):
        raise WorkflowError(
            f"{where}, field 'metadata.model_calls' must be a list of objects,"
            f" got {type(calls).__name__}"
        )
    for i, call in enumerate(calls):
        _check(call, f"metadata.model_calls[{i}]", where)
    return _with_sums(metadata)


def _with_sums(metadata: dict[str, Any]) -> dict[str, Any]:
    """The step's token and cost sums from its calls, where it gives none and every call that
    answered reported them (else they stay unknown)."""
    tokens = token_total(metadata)
    if tokens is not None and tokens.complete and tokens.calls:
        metadata.setdefault("input_tokens", tokens.input)
        metadata.setdefault("output_tokens", tokens.output)
    costs = [c["cost"] for c in _calls(metadata) if c.get("cost") is not None]
    if costs and not unpriced(metadata) and not {"cost", "cost_usd"} & set(metadata):
        metadata["cost"] = sum(costs)
    return metadata


def _check(call: Any, field: str, source: str) -> None:
    def refuse(key: str | None, what: str) -> WorkflowError:
        named = f"{field}.{key}" if key else field
        return WorkflowError(f"{source}, field '{named}' {what}")

    if not isinstance(call, Mapping):
        raise refuse(None, f"must be an object, got {type(call).__name__}")
    unknown = sorted(set(map(str, call)) - set(MODEL_CALL_KEYS))
    if unknown:
        raise refuse(
            None, f"has unknown key(s) {', '.join(unknown)}; known: {', '.join(MODEL_CALL_KEYS)}"
        )
    for key in ("model", "error"):
        if call.get(key) is not None and not isinstance(call[key], str):
            raise refuse(key, "must be a text")
    for key in ("input_tokens", "output_tokens"):
        value = call.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or count_out_of_range(value)
        ):
            raise refuse(key, f"must be a whole number from 0 to {MAX_COUNT}")
    for key in ("cost", "latency_s"):
        value = call.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise refuse(key, "must be a number >= 0")


def _calls(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls = metadata.get("model_calls")
    return [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []


def call_records(steps_metadata: Iterable[Mapping[str, Any]]) -> list[CallRecord]:
    """The steps' model calls as the target calls of a sample (provider ``trace``)."""
    return [
        CallRecord(
            "target",
            "trace",
            call.get("model"),
            latency_s=call.get("latency_s"),
            input_tokens=call.get("input_tokens"),
            output_tokens=call.get("output_tokens"),
            cost=call.get("cost"),
            error=call.get("error"),
        )
        for metadata in steps_metadata
        for call in _calls(metadata)
    ]


def token_total(metadata: Mapping[str, Any]) -> TokenTotal | None:
    """The tokens of a step's model calls (``None``: the step lists none)."""
    calls = _calls(metadata)
    if not calls:
        return None
    total = TokenTotal()
    for call in calls:
        if call.get("error") is None:
            total.add_call(call.get("input_tokens"), call.get("output_tokens"))
        else:
            total.add_known(call.get("input_tokens"), call.get("output_tokens"))
    return total


def unpriced(metadata: Mapping[str, Any]) -> int:
    """How many of a step's model calls that answered reported no cost."""
    return sum(c.get("error") is None and c.get("cost") is None for c in _calls(metadata))
