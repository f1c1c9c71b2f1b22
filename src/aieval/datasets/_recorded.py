"""What a row recorded about how its prediction was made: model calls and latency.

A row with a recorded prediction (or a ``recorded_error``) may say what producing it cost:

* ``recorded_calls``: a list of ``{provider, model, input_tokens, output_tokens, cost,
  latency_s}`` (every key optional), one per model that worked on the sample;
* ``recorded_latency_s``: the seconds the sample took.

Without a target, the run stores them as the sample's target calls and latency, so its tokens,
cost and latency count like those of a model aieval called itself. An imported inspect_ai log
fills both from each sample's ``model_usage`` and ``total_time``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aieval._records import CallRecord
from aieval.core import MAX_COUNT, count_out_of_range
from aieval.errors import DatasetError

__all__ = ["RECORDED_KEYS", "recorded_usage"]

#: The row fields this module reads.
RECORDED_KEYS = ("recorded_calls", "recorded_latency_s")

_CALL_KEYS = ("provider", "model", "input_tokens", "output_tokens", "cost", "latency_s")


def recorded_usage(
    row: Mapping[str, Any], source: str = "<rows>", line: int | None = None
) -> tuple[list[CallRecord], float | None]:
    """The row's recorded calls (as target calls) and latency; ``([], None)`` when it has none.

    Raises:
        DatasetError: a malformed ``recorded_calls`` or ``recorded_latency_s`` (names the field).
    """
    if "recorded_latency_s" not in row and "recorded_calls" not in row:
        return [], None  # the common row, told at once
    latency = _seconds(row.get("recorded_latency_s"), "recorded_latency_s", source, line)
    calls = row.get("recorded_calls")
    if calls is None:
        return [], latency
    if not isinstance(calls, list):
        raise DatasetError(
            f"'recorded_calls' must be a list of objects, got {type(calls).__name__}",
            source=source,
            line=line,
        )
    return [_call(item, i, source, line) for i, item in enumerate(calls)], latency


def _call(item: Any, index: int, source: str, line: int | None) -> CallRecord:
    where = f"recorded_calls[{index}]"
    if not isinstance(item, Mapping):
        raise DatasetError(
            f"'{where}' must be an object, got {type(item).__name__}", source=source, line=line
        )
    unknown = sorted(set(map(str, item)) - set(_CALL_KEYS))
    if unknown:
        raise DatasetError(
            f"'{where}' has unknown key(s) {', '.join(unknown)}; known: {', '.join(_CALL_KEYS)}",
            source=source,
            line=line,
        )
    for key in ("provider", "model"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise DatasetError(f"'{where}.{key}' must be a text", source=source, line=line)
    return CallRecord(
        "target",
        item.get("provider"),
        item.get("model"),
        latency_s=_seconds(item.get("latency_s"), f"{where}.latency_s", source, line),
        input_tokens=_count(item.get("input_tokens"), f"{where}.input_tokens", source, line),
        output_tokens=_count(item.get("output_tokens"), f"{where}.output_tokens", source, line),
        cost=_seconds(item.get("cost"), f"{where}.cost", source, line),
    )


def _count(value: Any, where: str, source: str, line: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or count_out_of_range(value):
        raise DatasetError(
            f"'{where}' must be a whole number from 0 to {MAX_COUNT} (the store's range),"
            f" got {value!r}",
            source=source,
            line=line,
        )
    return value


def _seconds(value: Any, where: str, source: str, line: int | None) -> float | None:
    """A number >= 0 (seconds, or a cost), or ``None``."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:
        raise DatasetError(
            f"'{where}' must be a number >= 0, got {value!r}", source=source, line=line
        )
    return float(value)
