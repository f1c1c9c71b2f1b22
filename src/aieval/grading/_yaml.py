"""Bounded, safe YAML loading for rubric and profile files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from aieval.errors import RubricError

__all__ = ["MAX_ALIASES", "MAX_BYTES", "load_yaml_file", "load_yaml_text"]

#: Largest rubric or profile file accepted, in bytes.
MAX_BYTES = 1_000_000
#: Most YAML aliases accepted; nested aliases can expand into billions of nodes when walked.
MAX_ALIASES = 100


class _BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses documents with too many aliases."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases")
        return super().compose_node(parent, index)


def load_yaml_text(text: str, source: str) -> Any:
    """Parse YAML text with the safe loader; errors name ``source`` and the line."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise RubricError(f"{source}: file is larger than {MAX_BYTES} bytes; split it up")
    try:
        return yaml.load(text, Loader=_BoundedSafeLoader)  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise RubricError(f"{source}{where}: invalid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise RubricError(f"{source}: invalid YAML: {exc}") from exc


def load_yaml_file(path: str | Path) -> Any:
    """Read and parse a YAML file, refusing files above :data:`MAX_BYTES`."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise RubricError(f"{p}: cannot read file: {exc.strerror or exc}") from exc
    if size > MAX_BYTES:
        raise RubricError(f"{p}: file is {size} bytes, larger than {MAX_BYTES}; split it up")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"{p}: cannot read file as UTF-8 text: {exc}") from exc
    return load_yaml_text(text, str(p))
