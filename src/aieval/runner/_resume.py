"""What a resumed run must keep: the settings that give its stored samples their meaning."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["config_changes"]

#: Settings that change what a sample's stored numbers mean: a resumed run must keep them.
_RESUME_KEYS = ("model", "target", "scorers", "pass_threshold", "workflow")


def config_changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs, among the settings a resumed run must keep, between two run configs.

    A run stored without a setting (an older store) is not held to it.

    >>> config_changes({"model": "v1", "pass_threshold": 0.5}, {"model": "v2",
    ...                 "pass_threshold": 0.5})
    ["model: 'v1' then, 'v2' now"]
    """
    out = []
    for key in _RESUME_KEYS:
        if key not in before:
            continue
        # compare as stored: JSON turns tuples into lists and keys into strings
        old, new = _as_stored(before.get(key)), _as_stored(now.get(key))
        if key == "target" and _callable(old) and _callable(new):
            continue  # a callable's code cannot be compared; its name says nothing either
        if old != new:
            out.append(f"{key}: {_brief(old)} then, {_brief(new)} now")
    return out


def _callable(target: Any) -> bool:
    return isinstance(target, dict) and target.get("kind") == "callable"


def _as_stored(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _brief(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, dict) and "name" in v for v in value):
        return "[" + ", ".join(str(v["name"]) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
