"""Bounded, strict, safe YAML loading: every YAML file aieval reads goes through here.

Eval files, code eval files, workflow definitions, rubrics, profiles and promotion policies are
user files. A few hundred bytes of nested aliases (``&a [*b, *b, ...]``, a "billion laughs")
expand into billions of nodes when a validator walks them, so the loader counts the expanded size
of the document before building any Python object and refuses it beyond
:data:`MAX_EXPANDED_NODES`. A key given twice in one mapping (``settings:`` twice) would silently
keep only the last value, so it is refused, naming the key's path and both lines; keys brought in
by a merge (``<<: *base``) may still be overridden.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from aieval._files import readable
from aieval.errors import RubricError, UserError

__all__ = [
    "MAX_ALIASES",
    "MAX_BYTES",
    "MAX_EXPANDED_NODES",
    "BoundedSafeLoader",
    "load_yaml_file",
    "load_yaml_text",
]

#: Largest YAML file accepted, in bytes.
MAX_BYTES = 1_000_000
#: Most YAML aliases accepted in one document.
MAX_ALIASES = 100
#: Most nodes a document may hold once every alias is expanded (a 1 MB file of plain YAML has
#: far fewer).
MAX_EXPANDED_NODES = 1_000_000


class _AliasBomb(yaml.YAMLError):
    pass


class _DuplicateKey(yaml.YAMLError):
    pass


_MERGE_TAG = "tag:yaml.org,2002:merge"


class BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses too many aliases, too large an alias expansion, and a
    key given twice in one mapping."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._paths: dict[int, str] = {}
        self._checked: set[int] = set()

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _AliasBomb(f"more than {MAX_ALIASES} aliases; write the values out")
        return super().compose_node(parent, index)

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {}, set())
        _record_paths(node, "", self._paths)
        return self.construct_document(node)

    def flatten_mapping(self, node: Any) -> None:
        # construct_mapping flattens first; merged mappings are flattened here too, before
        # merging rewrites ``node.value``, so each mapping is checked as written, once
        if id(node) not in self._checked:
            self._checked.add(id(node))
            self._refuse_duplicates(node)
        super().flatten_mapping(node)

    def _refuse_duplicates(self, node: yaml.MappingNode) -> None:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue  # a complex key is refused by the constructor if unhashable
            key = self.construct_object(key_node)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:
                continue
            if first is not key_node:
                parent = self._paths.get(id(node), "")
                raise _DuplicateKey(_duplicate_message(parent, first, key_node))


def _record_paths(node: yaml.Node, path: str, paths: dict[int, str]) -> None:
    """Map each mapping node under ``node`` to its key path (``settings``, ``scorers[0]``)."""
    if id(node) in paths or isinstance(node, yaml.ScalarNode):
        return  # scalars hold no keys; an alias keeps its anchor's path
    paths[id(node)] = path
    if isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _record_paths(child, f"{path}[{index}]", paths)
    elif isinstance(node, yaml.MappingNode):
        for key, child in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            _record_paths(child, f"{path}.{name}" if path else name, paths)


def _duplicate_message(parent: str, first: yaml.Node, second: yaml.Node) -> str:
    name = f"{parent}.{second.value}" if parent else str(second.value)
    lines = (first.start_mark.line + 1, second.start_mark.line + 1)
    where = (
        f"line {lines[0]} (twice)" if lines[0] == lines[1] else f"lines {lines[0]} and {lines[1]}"
    )
    same = "" if first.value == second.value else f" (the same key as {first.value!r})"
    return (
        f"duplicate key {name!r}{same} on {where}; YAML would silently keep only the last "
        "value: give the key once"
    )


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Nodes under ``node`` with aliases expanded; raises past :data:`MAX_EXPANDED_NODES`."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise _AliasBomb("an alias refers to a node that contains it (a recursive structure)")
    open_nodes.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_expanded_size(child, sizes, open_nodes) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            total += _expanded_size(k, sizes, open_nodes) + _expanded_size(v, sizes, open_nodes)
    if total > MAX_EXPANDED_NODES:
        raise _AliasBomb(
            f"aliases expand to more than {MAX_EXPANDED_NODES:,} values (an alias bomb?); "
            "write the values out"
        )
    open_nodes.discard(key)
    sizes[key] = total
    return total


def load_yaml_text(
    text: str,
    source: str,
    *,
    error: type[UserError] = RubricError,
    loader: type[yaml.SafeLoader] = BoundedSafeLoader,
) -> Any:
    """Parse YAML text with the safe loader (``loader``: a subclass of the bounded one); errors
    name ``source`` and the line.

    Raises:
        UserError: ``error`` (a :class:`~aieval.errors.RubricError` by default) for a file too
            large, invalid YAML, or an alias expansion beyond the bounds above.
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise error(f"{source}: file is larger than {MAX_BYTES} bytes; split it up")
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error(f"{source}{where}: invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{source}: invalid YAML: {exc}") from None
    except RecursionError:
        raise error(f"{source}: invalid YAML: nested too deeply") from None


def load_yaml_file(path: str | Path, *, error: type[UserError] = RubricError) -> Any:
    """Read and parse a YAML file, refusing files above :data:`MAX_BYTES`."""
    p = readable(path, "YAML file")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise error(f"{p}: cannot read file: {exc.strerror or exc}") from exc
    if size > MAX_BYTES:
        raise error(f"{p}: file is {size} bytes, larger than {MAX_BYTES}; split it up")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{p}: cannot read file as UTF-8 text: {exc}") from exc
    return load_yaml_text(text, str(p), error=error)
