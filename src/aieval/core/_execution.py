"""How a run's samples run, as its stored config records it: the settings a resume takes from
the call that resumes it (not what the run is, which a resume keeps)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["EXECUTION_SETTINGS", "without_execution"]

#: ``{name: (sub-spec, field, the run config's own key or None)}``: where a run config holds each
#: execution setting, in its ``spec`` (nested by sub-spec, or flat as earlier versions stored
#: it) and at its top level.
EXECUTION_SETTINGS: dict[str, tuple[str, str, str | None]] = {
    "concurrency": ("execution", "concurrency", "concurrency"),
    "timeout": ("target", "timeout", None),
    "retries": ("target", "retries", "retries"),
    "cache": ("target", "cache", "cache"),
    "executor": ("execution", "executor", None),
    "ray_address": ("execution", "ray_address", None),
}


def without_execution(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` without its execution settings: two configs equal this way describe the
    same run, however its samples ran.

    >>> without_execution({"name": "qa", "concurrency": 4, "spec": {"execution":
    ...     {"concurrency": 4, "telemetry": None}, "target": {"model": "m", "timeout": 9.0}}})
    {'name': 'qa', 'spec': {'execution': {'telemetry': None}, 'target': {'model': 'm'}}}
    """
    out = {k: v for k, v in config.items() if k not in _TOP}
    spec = out.get("spec")
    if isinstance(spec, Mapping):
        trimmed = {k: v for k, v in spec.items() if k not in _FIELDS}  # a flat spec's
        for sub in _SUBS:
            if isinstance(spec.get(sub), Mapping):
                trimmed[sub] = {k: v for k, v in spec[sub].items() if k not in _SUBS[sub]}
        out["spec"] = trimmed
    return out


_TOP = {key for _, _, key in EXECUTION_SETTINGS.values() if key is not None}
_FIELDS = {field for _, field, _ in EXECUTION_SETTINGS.values()}
_SUBS: dict[str, set[str]] = {}
for _sub, _field, _ in EXECUTION_SETTINGS.values():
    _SUBS.setdefault(_sub, set()).add(_field)
