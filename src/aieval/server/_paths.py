"""Confine every file an evaluation body names to the server's dataset roots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aieval._files import resolve_inside
from aieval.errors import ConfigError
from aieval.runner import DatasetConfig, EvalConfig

__all__ = ["confine", "confine_config"]

_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def confine(value: str, roots: Sequence[Path], field: str) -> Path:
    """The real path of ``value`` if it exists inside one of ``roots``; else a ConfigError.

    A relative path is looked up under each root in turn. ``..`` is refused outright, and the
    path is resolved (symlinks followed) before the containment check, so a link pointing out
    of a root is refused too. A missing file and a file outside the roots get the same answer.
    """
    return resolve_inside(value, [root.resolve() for root in roots], field)


def confine_config(config: EvalConfig, roots: Sequence[Path], *, allow_imports: bool) -> None:
    """Replace every path in ``config`` by its confined real path (in place).

    Files named *inside* the files (folder members, a workflow's schema and rubric) are
    checked when they are read, under :func:`aieval._files.confined_to`.
    """
    if config.conversation is not None or config.replay is not None:
        # its settings import the author's Python (tools, checks) and name a provider
        raise ConfigError(
            "conversation: this server does not run conversation evaluations (their settings "
            "import Python and call providers); run them with aieval run"
        )
    if config.imports and not allow_imports:
        raise ConfigError(
            "imports: this server does not import Python files (it would run their code); "
            "use registered scorers, or start the server with imports allowed"
        )
    config.imports = [
        str(confine(item, roots, f"imports[{i}]")) for i, item in enumerate(config.imports)
    ]
    config.dataset = _confine_dataset(config.dataset, roots)
    if isinstance(config.workflow, str):
        config.workflow = str(confine(config.workflow, roots, "workflow"))
    if config.profile is not None and config.profile.endswith(_FILE_SUFFIXES):
        config.profile = str(confine(config.profile, roots, "profile"))
    config.base_dir = str(roots[0].resolve())


def _confine_dataset(spec: str | DatasetConfig, roots: Sequence[Path]) -> str | DatasetConfig:
    if isinstance(spec, str):
        return str(confine(spec, roots, "dataset"))
    if spec.path is not None:
        spec.path = str(confine(spec.path, roots, "dataset.path"))
    if spec.rows is not None:
        spec.rows = [_confine_row(row, roots, i) for i, row in enumerate(spec.rows)]
    return spec


def _confine_row(row: dict[str, Any], roots: Sequence[Path], i: int) -> dict[str, Any]:
    # a row's recorded workflow run may be a file path: it is read like any other file
    ref = row.get("run")
    if isinstance(ref, str):
        return {**row, "run": str(confine(ref, roots, f"dataset.rows[{i}].run"))}
    return row
