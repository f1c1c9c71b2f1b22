"""promptfoo's ``$ref`` to an assertion template, resolved as promptfoo resolves it.

promptfoo dereferences its configuration (and each YAML or JSON tests file) with a JSON
Reference parser before reading it, so an assertion written ``{$ref:
"#/assertionTemplates/NAME"}`` is the template ``NAME`` of the same file, with the keys written
next to ``$ref`` laid over the template's. Only that form is read here: a reference is a JSON
pointer into the file that holds it (never another file or a URL: the configuration is data and
names no file to read this way), it stands for a whole assertion in an ``assert`` list, and it
leads to a mapping under ``assertionTemplates``. Anything else (a ``$ref`` elsewhere, to another
part of the file, a missing template, a cycle, a chain deeper than :data:`MAX_REF_DEPTH`) is
refused with the file and the reference: promptfoo would read it differently or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from aieval.errors import ConfigError

__all__ = ["MAX_REF_DEPTH", "MAX_RESOLVED_VALUES", "resolve_refs"]

#: Most templates one reference may pass through (a template that is itself a reference...)
MAX_REF_DEPTH = 16
#: Most values the resolved document may hold: templates that repeat templates (inside an
#: ``assert-set``) would otherwise grow exponentially with each level
MAX_RESOLVED_VALUES = 1_000_000

_PREFIX = "#/assertionTemplates/"
#: under a provider, tool and function ``parameters`` are JSON Schemas that promptfoo keeps
#: as written (it takes them out before dereferencing): their ``$ref`` is theirs
_SCHEMA_KEYS = {"parameters"}


def resolve_refs(document: Any, where: str, *, assertions: bool = False) -> Any:
    """``document`` (one file's parsed contents) with each assertion reference replaced by a
    copy of its template; ``assertions``: the document itself is a list of assertions (a
    standalone assertions file). The input is not changed (it may be cached).

    Raises:
        ConfigError: a reference other than ``#/assertionTemplates/NAME`` standing for an
            assertion, a missing template, a cycle, a chain too deep, or too large a result;
            named with ``where`` (the file) and the reference.
    """
    resolver = _Resolver(document, where)
    if assertions and isinstance(document, list):
        return resolver.assert_list(document, "", ())
    return resolver.value(document, "", ())


class _Resolver:
    def __init__(self, root: Any, where: str) -> None:
        self.root = root
        self.where = where
        self.made = 0
        templates = root.get("assertionTemplates") if isinstance(root, Mapping) else None
        self.templates: Mapping[str, Any] = templates if isinstance(templates, Mapping) else {}

    def count(self) -> None:
        self.made += 1
        if self.made > MAX_RESOLVED_VALUES:
            raise ConfigError(
                f"{self.where}: assertion templates expand to more than "
                f"{MAX_RESOLVED_VALUES:,} values; templates repeat templates too often"
            )

    def value(self, node: Any, path: str, seen: tuple[str, ...]) -> Any:
        """``node`` at ``path`` resolved; ``seen``: the templates being expanded around it."""
        self.count()
        if isinstance(node, Mapping):
            if "$ref" in node:
                raise ConfigError(
                    f"{self.where}: {path or '/'}: $ref {node['$ref']!r}: only an assertion of "
                    f"an assert list may be a reference (to {_PREFIX}NAME); this one is not "
                    "translated: write the value out"
                )
            out: dict[Any, Any] = {}
            for key, item in node.items():
                here = f"{path}/{key}"
                if key == "assert" and isinstance(item, list):
                    out[key] = self.assert_list(item, here, seen)
                elif (key in _SCHEMA_KEYS and path.startswith(("/providers", "/targets"))) or (
                    here == "/assertionTemplates"
                ):
                    # a tool's JSON Schema: promptfoo keeps its $ref as written; the templates
                    # are read where an assertion refers to them
                    out[key] = item
                else:
                    out[key] = self.value(item, here, seen)
            return out
        if isinstance(node, list):
            return [self.value(item, f"{path}/{i}", seen) for i, item in enumerate(node)]
        return node

    def assert_list(self, items: list[Any], path: str, seen: tuple[str, ...]) -> list[Any]:
        self.count()
        out = []
        for i, item in enumerate(items):
            here = f"{path}/{i}"
            if isinstance(item, Mapping) and "$ref" in item:
                found, chain = self.template(item, here, seen)
                out.append(self.value(found, here, chain))
            else:
                out.append(self.value(item, here, seen))
        return out

    def template(
        self, ref: Mapping[str, Any], path: str, seen: tuple[str, ...]
    ) -> tuple[dict[Any, Any], tuple[str, ...]]:
        """The assertion ``ref`` stands for: its template, with the keys beside ``$ref`` over
        the template's (as promptfoo's reference parser merges an extended reference), and the
        chain of templates expanded to reach it."""
        target = ref["$ref"]
        name = self.name(target, path)  # target is text from here on
        if target in seen:
            shown = " -> ".join((*seen, target))
            raise ConfigError(f"{self.where}: {path}: $ref {target!r} is circular ({shown})")
        if len(seen) >= MAX_REF_DEPTH:
            raise ConfigError(
                f"{self.where}: {path}: $ref {target!r}: more than {MAX_REF_DEPTH} templates "
                "refer to one another in a chain"
            )
        if name not in self.templates:
            names = sorted(map(str, self.templates))
            known = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "") or "none"
            raise ConfigError(
                f"{self.where}: {path}: $ref {target!r}: no assertion template {name!r} in "
                f"this file's assertionTemplates (it has: {known})"
            )
        found = self.templates[name]
        chain: tuple[str, ...] = (*seen, str(target))
        if isinstance(found, Mapping) and "$ref" in found:
            found, chain = self.template(found, path, chain)
        if not isinstance(found, Mapping):
            raise ConfigError(
                f"{self.where}: {path}: $ref {target!r}: the template is not an assertion "
                f"(a mapping with a type), got {found!r}"
            )
        extra = {k: v for k, v in ref.items() if k != "$ref"}
        return {**extra, **{k: v for k, v in found.items() if k not in extra}}, chain

    def name(self, target: Any, path: str) -> str:
        """The template name of a ``#/assertionTemplates/NAME`` pointer (``~1`` is ``/``,
        ``~0`` is ``~``, ``%xx`` decoded, as in a JSON pointer within a URI fragment)."""
        if not isinstance(target, str) or not target.startswith(_PREFIX):
            raise ConfigError(
                f"{self.where}: {path}: $ref {target!r}: only a reference to this file's "
                f"assertion templates ({_PREFIX}NAME) is translated; a reference to another "
                "file, a URL or another part of the configuration is not"
            )
        raw = target[len(_PREFIX) :]
        if not raw or "/" in raw:
            raise ConfigError(
                f"{self.where}: {path}: $ref {target!r}: name one template ({_PREFIX}NAME)"
            )
        return unquote(raw).replace("~1", "/").replace("~0", "~")
