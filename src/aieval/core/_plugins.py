"""One loader for every plug-in group: installed entry points, then the built-in table.

A package plugs into aieval with an entry point in one of :data:`GROUPS`::

    [project.entry-points."aieval.observers"]
    mine = "mypackage.observe:factory"

The built-ins are declared in ``pyproject.toml`` the same way and listed in :data:`BUILTIN`,
which answers when the package metadata is missing or older than the source (code run from a
source tree), so the built-ins never depend on how aieval was installed.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from typing import Any

from aieval.errors import ConfigError

__all__ = ["BUILTIN", "GROUPS", "load_plugin", "load_plugins", "plugin_names"]

#: The entry-point groups aieval reads, by what they plug in.
GROUPS: dict[str, str] = {
    "scorers": "aieval.scorers",
    "providers": "aieval.providers",
    "evaluators": "aieval.evaluators",
    "observers": "aieval.observers",
    "gates": "aieval.gates",
    "graders": "aieval.graders",
}

#: Plug-ins that ship with aieval, by group: name -> ``module:attribute``.
BUILTIN: dict[str, dict[str, str]] = {
    "aieval.evaluators": {
        "workflow": "aieval.workflows._evaluator:factory",
        "traces": "aieval.traces._evaluator:factory",
        "conversation": "aieval.conversations._evaluator:factory",
        "mcp": "aieval.mcp._evaluator:factory",
    },
    "aieval.scorers": {"code_passes": "aieval.code._scorer:code_passes"},
    "aieval.observers": {"otel": "aieval.telemetry._observer:observer"},
    "aieval.graders": {"threshold": "aieval.core._threshold:factory"},
    "aieval.gates": {
        "citations_present_for_claims": "aieval.scorers.rag:citations_present_for_claims",
        "tool_call_schema_valid": "aieval.scorers.tools:tool_call_schema_valid",
        "no_forbidden_tool_invoked": "aieval.scorers.tools:no_forbidden_tool_invoked",
        "handoff_graph_respected": "aieval.scorers.tools:handoff_graph_respected",
        "patch_applies": "aieval.scorers.swe:patch_applies",
        "final_state_matches": "aieval.scorers.state:final_state_matches",
    },
}


def _entries(group: str) -> dict[str, metadata.EntryPoint]:
    """The group's entry points by name: the built-ins, then the installed ones.

    aieval's own installed entry points never replace the built-in table (installed metadata
    may be older than the source). Another package's entry point with a built-in's name is a
    conflict: :func:`load_plugin` refuses that name rather than pick one silently.
    """
    builtin = BUILTIN.get(group, {})
    found = {name: metadata.EntryPoint(name, value, group) for name, value in builtin.items()}
    for ep in _installed(group):
        if ep.name in builtin and (_distribution(ep) == "aieval" or ep.value == builtin[ep.name]):
            continue
        found[ep.name] = ep
    return found


#: The installed entry points read last, by group, with the import path's stamp they were
#: read under and the function that read them (a test may stand another in).
_READ: dict[str, tuple[object, tuple[tuple[str, int], ...], tuple[metadata.EntryPoint, ...]]] = {}


def _path_stamp() -> tuple[tuple[str, int], ...]:
    """``sys.path`` with each folder's modification time: a package installed or removed (its
    ``.dist-info`` folder added or deleted) or a folder put on the path changes it."""
    stamp = []
    for entry in sys.path:
        try:
            stamp.append((entry, os.stat(entry or ".").st_mtime_ns))
        except (OSError, ValueError):
            stamp.append((entry, -1))
    return tuple(stamp)


def _installed(group: str) -> tuple[metadata.EntryPoint, ...]:
    """The group's installed entry points, read again only when the import path's stamp
    changed: reading every installed package's metadata takes milliseconds, and a server
    scoring traces one at a time looks plug-ins up for each."""
    reader, stamp = metadata.entry_points, _path_stamp()
    read = _READ.get(group)
    if read is not None and read[0] is reader and read[1] == stamp:
        return read[2]
    found = tuple(reader(group=group))
    _READ[group] = (reader, stamp, found)
    return found


def _distribution(entry: metadata.EntryPoint) -> str | None:
    dist = getattr(entry, "dist", None)
    return None if dist is None else str(dist.metadata["Name"] or "").lower() or None


def _conflict(group: str, name: str, entry: metadata.EntryPoint) -> ConfigError | None:
    """The error for an installed plug-in that has the name of a built-in one."""
    builtin = BUILTIN.get(group, {}).get(name)
    if builtin is None or entry.value == builtin:
        return None
    owner = _distribution(entry) or "an installed package"
    return ConfigError(
        f"plug-in {name!r} of entry-point group {group!r} is both aieval's built-in "
        f"({builtin}) and {owner}'s ({entry.value}): rename the entry point in {owner}, so "
        "that neither replaces the other unnoticed"
    )


def plugin_names(group: str) -> list[str]:
    """Sorted names of the group's plug-ins (installed and built-in), none loaded."""
    return sorted(_entries(group))


def load_plugin(group: str, name: str) -> Any | None:
    """The object the group's plug-in ``name`` points to, or ``None`` when there is none.

    Raises:
        ConfigError: the plug-in exists but cannot be imported (naming the group, the name and
            its ``module:attribute``), or another package's plug-in has a built-in's name.
    """
    entry = _entries(group).get(name)
    return None if entry is None else _load(group, entry)


def load_plugins(group: str) -> dict[str, Any]:
    """Every plug-in of the group, loaded, by name (sorted).

    Raises:
        ConfigError: a plug-in cannot be imported.
    """
    entries = _entries(group)
    return {name: _load(group, entries[name]) for name in sorted(entries)}


def _load(group: str, entry: metadata.EntryPoint) -> Any:
    conflict = _conflict(group, entry.name, entry)
    if conflict is not None:
        raise conflict
    try:
        return entry.load()
    except Exception as exc:
        raise ConfigError(
            f"plug-in {entry.name!r} of entry-point group {group!r} cannot be loaded "
            f"from {entry.value!r}: {type(exc).__name__}: {exc}"
        ) from exc
