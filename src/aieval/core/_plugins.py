"""One loader for every plug-in group: installed entry points, then the built-in table.

A package plugs into aieval with an entry point in one of :data:`GROUPS`::

    [project.entry-points."aieval.observers"]
    mine = "mypackage.observe:factory"

The built-ins are declared in ``pyproject.toml`` the same way and listed in :data:`BUILTIN`,
which answers when the package metadata is missing or older than the source (code run from a
source tree), so the built-ins never depend on how aieval was installed.
"""

from __future__ import annotations

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
}

#: Plug-ins that ship with aieval, by group: name -> ``module:attribute``.
BUILTIN: dict[str, dict[str, str]] = {
    "aieval.evaluators": {"workflow": "aieval.workflows._evaluator:factory"},
    "aieval.scorers": {"code_passes": "aieval.code._scorer:code_passes"},
    "aieval.observers": {"otel": "aieval.telemetry._observer:observer"},
    "aieval.gates": {
        "citations_present_for_claims": "aieval.scorers.rag:citations_present_for_claims",
        "tool_call_schema_valid": "aieval.scorers.tools:tool_call_schema_valid",
        "no_forbidden_tool_invoked": "aieval.scorers.tools:no_forbidden_tool_invoked",
        "handoff_graph_respected": "aieval.scorers.tools:handoff_graph_respected",
        "patch_applies": "aieval.scorers.swe:patch_applies",
    },
}


def _entries(group: str) -> dict[str, metadata.EntryPoint]:
    """The group's entry points by name: the built-ins, overridden by installed ones."""
    found = {
        name: metadata.EntryPoint(name, value, group)
        for name, value in BUILTIN.get(group, {}).items()
    }
    found.update((ep.name, ep) for ep in metadata.entry_points(group=group))
    return found


def plugin_names(group: str) -> list[str]:
    """Sorted names of the group's plug-ins (installed and built-in), none loaded."""
    return sorted(_entries(group))


def load_plugin(group: str, name: str) -> Any | None:
    """The object the group's plug-in ``name`` points to, or ``None`` when there is none.

    Raises:
        ConfigError: the plug-in exists but cannot be imported (naming the group, the name and
            its ``module:attribute``).
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
    try:
        return entry.load()
    except Exception as exc:
        raise ConfigError(
            f"plug-in {entry.name!r} of entry-point group {group!r} cannot be loaded "
            f"from {entry.value!r}: {type(exc).__name__}: {exc}"
        ) from exc
