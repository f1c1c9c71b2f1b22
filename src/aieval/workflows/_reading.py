"""Reading the fields of a recorded run or step: aliases, counts, durations and amounts.

A bad value is a :class:`WorkflowError` naming the record and the field; a value given under two
names (``status`` and ``overall_status``, ``duration_s`` and ``duration_ms``) must agree, or it
is refused naming both. Nothing is dropped: a second name of a descriptive field (a step's
``id`` beside its ``name``) stays in ``extra`` and is written back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aieval.errors import WorkflowError

__all__ = [
    "DESCRIPTIVE",
    "UNRESOLVED_KEYS",
    "checked_amounts",
    "count",
    "mapping",
    "opt_str",
    "output_names",
    "pick",
    "recorded_duration",
    "tier",
]

#: Targets whose second name, when its value differs, is a different fact kept in ``extra``
#: (a step's ``id`` beside its ``name``); every other target's names must agree.
DESCRIPTIVE = frozenset({"workflow_id", "workflow_name", "name", "agent_role", "model_used"})
_AMOUNT_KEYS = ("cost", "cost_usd", "total_cost", "duration_s", "duration_ms")
#: Metadata keys where a runner lists outputs it could not resolve.
UNRESOLVED_KEYS = ("unresolved_outputs", "unresolved_required_outputs")
# Two recorded durations agree when they differ by at most this (seconds, or relative).
_DURATION_TOLERANCE = 1e-6


def pick(
    data: Mapping[str, Any], keys: Mapping[str, tuple[str, ...]], where: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """``({target: value}, extra, {target: name read})``: each target's value under its first
    name present.

    A second name with an equal value is the same fact, read once; with another value it is
    kept in ``extra`` for a descriptive target and refused for any other.
    """
    got: dict[str, Any] = {}
    names: dict[str, str] = {}
    used: set[str] = set()
    for target, aliases in keys.items():
        present = [a for a in aliases if a in data and a not in used]
        if not present:
            continue
        first = present[0]
        got[target], names[target] = data[first], first
        used.add(first)
        for other in present[1:]:
            if _same(data[other], data[first]):
                used.add(other)
            elif target not in DESCRIPTIVE:
                raise WorkflowError(
                    f"{where}: fields {first!r} and {other!r} disagree "
                    f"({_short(data[first])} vs {_short(data[other])}); keep one of them"
                )
    extra = {str(k): v for k, v in data.items() if k not in used}
    return got, extra, names


def checked_amounts(metadata: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A copy of ``metadata``, its costs and durations (read as the run's cost and duration, so
    a bad one would be ignored) checked to be numbers >= 0."""
    for key in _AMOUNT_KEYS:
        value = metadata.get(key)
        if value is not None and not (_numeric(value) and math.isfinite(value) and value >= 0):
            raise WorkflowError(
                f"{where}, field 'metadata.{key}': expected a number >= 0, got {_short(value)}"
            )
    return dict(metadata)


def recorded_duration(got: Mapping[str, Any], where: str, names: Mapping[str, str]) -> float | None:
    """The recorded duration in seconds (``duration_s``, or ``duration_ms`` / 1000); when both
    are given they must agree. ``names``: the field each was read from, for messages."""
    found: list[tuple[str, float]] = []
    for key, scale in (("duration_s", 1.0), ("duration_ms", 1000.0)):
        value = got.get(key)
        if value is None:
            continue
        name = names.get(key, key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise WorkflowError(f"{where}, field {name!r}: expected a duration >= 0, got {value!r}")
        found.append((name, float(value) / scale))
    if len(found) == 2 and not math.isclose(
        found[0][1], found[1][1], rel_tol=_DURATION_TOLERANCE, abs_tol=_DURATION_TOLERANCE
    ):
        (a, x), (b, y) = found
        raise WorkflowError(
            f"{where}: fields {a!r} and {b!r} disagree ({x:g} s vs {y:g} s); keep one of them"
        )
    return found[0][1] if found else None


def output_names(value: Any, where: str) -> list[str]:
    """Output names as a runner records them: a list of names, one name, or a mapping of name
    to reason (its keys). ``None`` is none; any other shape is refused, naming ``where``."""
    if value is None:
        return []
    items = list(value.keys()) if isinstance(value, Mapping) else value
    items = [items] if isinstance(items, str) else items
    if isinstance(items, list | tuple) and all(isinstance(i, str) and i for i in items):
        return list(dict.fromkeys(items))
    raise WorkflowError(
        f"{where}: expected output names (a list of names, one name, or a mapping of name to "
        f"reason), got {_short(value)}"
    )


def tier(value: Any, where: str) -> int | str | None:
    """A model tier: an integer level stays an integer, a name stays text."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise WorkflowError(f"{where}: expected an integer level or a name, got {value!r}")
    if isinstance(value, int):
        return value
    return opt_str(value)


def opt_str(value: Any) -> str | None:
    """Text of a value (a str-valued enum's value), ``None`` kept."""
    if value is None:
        return None
    raw = getattr(value, "value", value)
    return str(raw)


def count(value: Any, where: str) -> int:
    """A non-negative integer (``None``: 0)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkflowError(f"{where}: expected a non-negative integer, got {value!r}")
    return value


def mapping(value: Any, where: str) -> dict[str, Any]:
    """A copy of an object field (``None``: empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise WorkflowError(f"{where}: expected an object, got {type(value).__name__}")
    return dict(value)


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (_numeric(a) and _numeric(b) and a == b)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
