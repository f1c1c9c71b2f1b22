"""Plugins that ship with aieval, by entry-point group: name -> ``module:attribute``.

The same entries are declared in ``pyproject.toml`` (``[project.entry-points."aieval.*"]``),
so an installed aieval finds them through ``importlib.metadata`` like any third-party plugin.
This table answers when the package metadata is missing or older than the source (code run
from a source tree), so the built-ins never depend on how aieval was installed.
"""

from __future__ import annotations

__all__ = ["BUILTIN"]

BUILTIN: dict[str, dict[str, str]] = {
    "aieval.evaluators": {"workflow": "aieval.workflows._evaluator:factory"},
}
