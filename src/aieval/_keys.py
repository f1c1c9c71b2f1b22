"""Unknown configuration keys: refused with the key's path and the nearest known key.

A misspelt setting (``settings.concurency``) must never be dropped silently; every schema aieval
reads (eval files, server bodies, rubrics, profiles, workflow evaluation blocks) refuses it with
``settings.concurency: unknown key; did you mean concurrency?``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

__all__ = [
    "error_path",
    "field_problems",
    "known_fields",
    "pydantic_problems",
    "suggestion",
    "unknown_key",
]


def unknown_key(key: object, known: Iterable[str]) -> str:
    """``unknown key; did you mean X?`` (or the known keys when none is close)."""
    hint = suggestion(key, known)
    return f"unknown key; {hint}" if hint else "unknown key"


def suggestion(key: object, known: Iterable[str], noun: str = "keys") -> str:
    """``did you mean X?`` for the nearest known key, else ``known keys: ...`` (or nothing);
    ``noun`` names what is known (``categories``...)."""
    names = sorted(set(known))
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}?"
    return f"known {noun}: {', '.join(names)}" if names else ""


def known_fields(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The field names (by alias when set) of the model found at ``loc`` below ``model``."""
    candidates = [model]
    for part in loc:
        if isinstance(part, int):
            continue
        deeper: list[type[BaseModel]] = []
        for cls in candidates:
            field = cls.model_fields.get(str(part))
            if field is not None:
                deeper.extend(_models_in(field.annotation))
            elif cls.__name__ == part:  # a union branch pydantic names by its class
                deeper.append(cls)
        candidates = deeper
    return sorted({(f.alias or name) for cls in candidates for name, f in cls.model_fields.items()})


def error_path(loc: Sequence[Any], model: type[BaseModel] | None = None) -> str:
    """``settings.concurrency`` / ``criteria[2].weight``; union branch names are left out."""
    path = ""
    branch_names = _branch_names(model) if model is not None else set()
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif str(part) not in branch_names:
            path += f".{part}" if path else str(part)
    return path


def pydantic_problems(errors: Sequence[Any], model: type[BaseModel]) -> list[str]:
    """One ``path: problem`` per pydantic error of ``model``; unknown keys name the nearest key.

    When a value fails only because it carries an unknown key, the errors of the union's other
    branches (``dataset: Input should be a valid string``) are left out: they would mislead.
    """
    unknown_roots = {err["loc"][0] for err in errors if err["type"] == "extra_forbidden"}
    problems = []
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            msg = unknown_key(loc[-1], known_fields(model, loc[:-1]))
        elif loc and loc[0] in unknown_roots and len(loc) > 1 and _is_branch(loc[1]):
            continue
        else:
            msg = str(err["msg"]).removeprefix("Value error, ")
        problems.append(f"{error_path(loc, model) or '(top)'}: {msg}")
    return problems


def field_problems(exc: ValidationError, top: str = "(top)") -> str:
    """Every error of ``exc`` as ``dotted.path: message`` (``top`` for the whole value),
    joined by ``; ``."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or top}: {err['msg']}" for err in exc.errors()
    )


def _is_branch(part: Any) -> bool:
    """A loc part naming a union branch: a type name such as ``str`` or ``DatasetConfig``."""
    return isinstance(part, str) and (part[:1].isupper() or part in _PRIMITIVES)


_PRIMITIVES = {"str", "int", "float", "bool", "list", "dict", "none"}


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _branch_names(model: type[BaseModel]) -> set[str]:
    names = set(_PRIMITIVES)
    seen: set[type[BaseModel]] = set()
    todo = [model]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        names.add(cls.__name__)
        for field in cls.model_fields.values():
            todo.extend(_models_in(field.annotation))
    return names
