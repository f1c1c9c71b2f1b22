"""What a resumed run must keep (the settings that give its stored samples their meaning), and
what it takes from the resuming call (how its samples run: concurrency, timeouts, retries)."""

from __future__ import annotations

import ast
import json
from typing import TYPE_CHECKING, Any

from aieval.core import EXECUTION_SETTINGS, SettingChange

if TYPE_CHECKING:
    from aieval.runner._spec import RunSpec

__all__ = ["config_changes", "executed_config", "execution_changes"]

_UNSET: Any = object()
#: Settings that change what a sample's stored numbers mean: a resumed run must keep them.
_RESUME_KEYS = ("model", "target", "scorers", "pass_threshold", "workflow", "epochs")
#: What a run stored without a setting had: held to it all the same (a run stored before
#: ``epochs`` existed answered each example once).
_DEFAULTS: dict[str, Any] = {"epochs": 1}
#: Settings of the stored spec a resumed run must keep too, as ``(sub-spec, field)`` (``None``:
#: a top-level field); a run stored without a spec, or without the field, is not held to it.
_SPEC_KEYS = (("target", "system_prompt"), ("scoring", "grader"), (None, "prediction_field"))


def config_changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs, among the settings a resumed run must keep, between two run configs.

    A run stored without a setting (an older store) is not held to it.

    >>> config_changes({"model": "v1", "pass_threshold": 0.5}, {"model": "v2",
    ...                 "pass_threshold": 0.5})
    ["model: 'v1' then, 'v2' now"]
    """
    out = []
    for key in _RESUME_KEYS:
        if key not in before and key not in _DEFAULTS:
            continue
        # compare as stored: JSON turns tuples into lists and keys into strings
        default = _DEFAULTS.get(key)
        old, new = _as_stored(before.get(key, default)), _as_stored(now.get(key, default))
        if key == "target" and _callable(old) and _callable(new):
            continue  # a callable's code cannot be compared; its name says nothing either
        if old == new:
            continue
        # the same scorers configured otherwise: name each setting that changed
        detail = _scorer_changes(old, new) if key == "scorers" else []
        out += detail or [f"{key}: {_brief(old)} then, {_brief(new)} now"]
    for sub, field in _SPEC_KEYS:
        old = _spec_value(before, sub, field)
        if old is _UNSET:
            continue
        new = _spec_value(now, sub, field)
        if _as_stored(old) != _as_stored(None if new is _UNSET else new):
            name = f"{sub}.{field}" if sub else field
            out.append(f"{name}: {_shown(old)} then, {_shown(new)} now")
    return out


def execution_changes(before: dict[str, Any], spec: RunSpec) -> list[SettingChange]:
    """The execution settings ``spec`` resumes a run with that differ from those the run's
    stored config says it ran with (a setting it did not record is not reported)."""
    out = []
    for name, (sub, field, key) in EXECUTION_SETTINGS.items():
        old = _spec_value(before, sub, field)
        if old is _UNSET and key is not None and key in before:
            old = before[key]
        new = getattr(getattr(spec, sub), field)
        if old is not _UNSET and _as_stored(old) != _as_stored(new):
            out.append(SettingChange(name, old, new))
    return out


def executed_config(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """The stored run's config with the execution settings of ``now`` (the resuming call's
    config): what the store keeps once the run is resumed, so it says what the run last used."""
    out = dict(before)
    spec_before, spec_now = before.get("spec"), now.get("spec")
    spec = dict(spec_before) if isinstance(spec_before, dict) else None
    for sub, field, key in EXECUTION_SETTINGS.values():
        if key is not None and key in now:
            out[key] = now[key]
        value = _spec_value(now, sub, field)
        if spec is None or value is _UNSET:
            continue
        if isinstance(spec.get(sub), dict):
            spec[sub] = {**spec[sub], field: value}
        elif sub not in spec:  # a flat spec stored by an earlier version
            spec[field] = value
    if spec is not None and isinstance(spec_now, dict):
        out["spec"] = spec
    return out


def _spec_value(config: dict[str, Any], sub: str | None, field: str) -> Any:
    """``config["spec"][sub][field]`` (or the flat spec's ``field``), else ``_UNSET``."""
    spec = config.get("spec")
    if not isinstance(spec, dict):
        return _UNSET
    nested = spec.get(sub) if sub is not None else spec
    if isinstance(nested, dict) and field in nested:
        return nested[field]
    return spec.get(field, _UNSET)


def _scorer_changes(before: Any, now: Any) -> list[str]:
    """``scorers.NAME.OPTION[.FIELD]: old then, new now`` for scorers kept under the same names.

    Options are stored as ``repr()`` text; literal ones (numbers, strings, dicts, a dataclass's
    ``Name(field=...)``) are read back so a changed field is named, others compare as text.
    Empty when the names differ (the caller then shows the lists of names).
    """
    names = [_name(s) for s in before] if isinstance(before, list) else None
    if not isinstance(now, list) or names is None or names != [_name(s) for s in now]:
        return []
    out: list[str] = []
    for old, new in zip(before, now, strict=True):
        path = f"scorers.{old['name']}"
        old_options, new_options = old.get("options") or {}, new.get("options") or {}
        if not isinstance(old_options, dict) or not isinstance(new_options, dict):
            out += _diff(f"{path}.options", old_options, new_options)
        else:
            for option in _keys(old_options, new_options):
                out += _diff(
                    f"{path}.{option}",
                    _literal(old_options.get(option, _UNSET)),
                    _literal(new_options.get(option, _UNSET)),
                )
        for field in _keys(old, new) - {"name", "options"}:
            out += _diff(f"{path}.{field}", old.get(field, _UNSET), new.get(field, _UNSET))
    return out


def _name(scorer: Any) -> str | None:
    return str(scorer["name"]) if isinstance(scorer, dict) and "name" in scorer else None


def _keys(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    return set(old) | set(new)


def _diff(path: str, old: Any, new: Any) -> list[str]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            change
            for key in sorted(_keys(old, new), key=str)
            for change in _diff(f"{path}.{key}", old.get(key, _UNSET), new.get(key, _UNSET))
        ]
    return [f"{path}: {_shown(old)} then, {_shown(new)} now"]


def _shown(value: Any) -> str:
    return "unset" if value is _UNSET else _brief(value)


def _literal(text: Any) -> Any:
    """A stored ``repr()`` read back as data when it is a literal, else the text itself."""
    if not isinstance(text, str):
        return text
    try:
        return _node(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return text


def _node(node: ast.AST) -> Any:
    if isinstance(node, ast.Call) and not node.args and all(k.arg for k in node.keywords):
        # Name(field=value, ...), a dataclass's repr: its type and each field
        fields = {str(k.arg): _node(k.value) for k in node.keywords}
        return {"(type)": ast.unparse(node.func), **fields}
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return {str(_node(k)) if k is not None else "**": _node(v) for k, v in pairs}
    if isinstance(node, ast.List | ast.Tuple):
        return [_node(e) for e in node.elts]
    return ast.literal_eval(node)


def _callable(target: Any) -> bool:
    return isinstance(target, dict) and target.get("kind") == "callable"


def _as_stored(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _brief(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, dict) and "name" in v for v in value):
        return "[" + ", ".join(str(v["name"]) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
