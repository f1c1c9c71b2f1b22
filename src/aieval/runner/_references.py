"""What a run's spec names, resolved into objects: import references and scorer entries.

:func:`resolve_scorers` is the one resolution of scorer entries (objects, plain functions,
registered names, ``module:qualname`` references, eval-file mappings); :func:`scorer_entry`
is its inverse, the serialisable entry of a scorer given to ``run()``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from aieval._keys import unknown_key
from aieval.core import ROW_CHECK_PREFIX
from aieval.errors import ConfigError
from aieval.runner._shipping import brief
from aieval.scorers import GRADING_KEYS, Scorer, get_scorer

__all__ = [
    "ScorerEntry",
    "import_reference",
    "is_builtin",
    "reference_of",
    "resolve_entry",
    "resolve_scorers",
    "scorer_entry",
]

#: A scorer as a spec names it: a name, a reference, or a one-key mapping {name: {options}}.
ScorerEntry = str | dict[str, dict[str, Any]]


def reference_of(obj: Any, field: str) -> str:
    """The ``module:qualname`` that imports ``obj`` back, or a :class:`ConfigError`."""
    named = obj.fn if isinstance(obj, Scorer) else obj
    module = getattr(named, "__module__", None)
    qualname = getattr(named, "__qualname__", None)
    if module and qualname and "<" not in qualname and module != "__main__":
        ref = f"{module}:{qualname}"
        try:
            imported = import_reference(ref, field)
        except ConfigError:
            imported = None
        # A plain function comes back as Scorer(fn): the same scorer only under fn's own name.
        same_scorer = named is not obj and getattr(named, "__name__", None) == obj.name
        if imported is obj or (imported is named and same_scorer):
            return ref
    raise ConfigError(
        f"{field}: {brief(obj)} cannot be referenced by import path (a lambda, a nested or "
        "__main__ function, a renamed scorer); define it at module level in an importable module "
        "(with @scorer(name=...) to name it), or pass it to run()"
    )


def import_reference(ref: str, field: str) -> Any:
    """Import ``"package.module:qualname"``; a :class:`ConfigError` names the field."""
    module_name, sep, qualname = ref.partition(":")
    if not sep or not module_name or not qualname:
        raise ConfigError(f"{field}: {ref!r} is not an import reference 'package.module:name'")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{field}: cannot import {ref!r}: {exc}") from None
    return obj


def resolve_scorers(entries: Any) -> list[Scorer]:
    """The one resolution of scorer entries into scorers: :class:`Scorer` objects, plain
    functions, registered names, ``"module:qualname"`` references and ``{name: {options}}``
    mappings (as in eval files; an option the scorer does not take is refused here).

    Raises:
        ConfigError: not a list, an unknown scorer or option, or two scorers of one name.
    """
    if isinstance(entries, str | Scorer) or not isinstance(entries, Iterable):
        raise ConfigError("scorers must be a list, e.g. scorers=[exact_match]")
    resolved = [_one_scorer(entry, i) for i, entry in enumerate(entries)]
    names = [s.name for s in resolved]
    for i, name in enumerate(names):
        if name.startswith(ROW_CHECK_PREFIX):
            raise ConfigError(
                f"scorers[{i}]: the name {name!r} is kept for a dataset row's own checks "
                f"({ROW_CHECK_PREFIX}...); give the scorer another name"
            )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(
            f"two scorers share the name {', '.join(map(repr, duplicates))}; "
            "give one another name with @scorer(name=...) or .with_options(name=...)"
        )
    return resolved


def _one_scorer(entry: Any, index: int) -> Scorer:
    if isinstance(entry, Scorer):
        return entry
    if entry == "llm_judge":
        raise ConfigError(
            "scorers: llm_judge needs its options, as a mapping: "
            '- llm_judge: {rubric: "...", provider: openai, model: gpt-4o, name: quality}'
        )
    if isinstance(entry, str):
        if ":" not in entry:
            return get_scorer(entry)
        imported = import_reference(entry, f"scorers[{index}]")
        return imported if isinstance(imported, Scorer) else _one_scorer(imported, index)
    if isinstance(entry, dict) and len(entry) == 1:
        ((name, options),) = entry.items()
        return resolve_entry(name, dict(options or {}), f"scorers.{name}")
    if callable(entry):
        return Scorer(entry)
    raise ConfigError(f"not a scorer: {brief(entry)}")


def resolve_entry(name: str, options: dict[str, Any], where: str) -> Scorer:
    """The scorer of one ``{name: {options}}`` entry (an eval file's, or a row's check):
    the registered scorer with its options bound (``name`` renames it; ``threshold`` and
    ``weight`` grade it), or an ``llm_judge`` built from them.

    Raises:
        ConfigError: an unknown scorer, or an option it does not take or refuses; the message
            starts with ``where`` for an unknown key.
    """
    options = dict(options)
    if name == "llm_judge":
        from aieval.scorers import llm_judge

        _check_options(llm_judge, options, where)
        grading = {k: options.pop(k) for k in GRADING_KEYS if k in options}
        try:
            judge = llm_judge(**options)
        except TypeError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        return judge.with_options(**grading) if grading else judge
    rename = options.pop("name", None)
    registered = get_scorer(name)
    _check_options(registered.fn, options, where)
    return registered.with_options(name=rename, **options)


def _check_options(fn: Callable[..., Any], options: dict[str, Any], where: str) -> None:
    """Refuse an option ``fn`` does not take (a scorer would fail every sample at run time)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature: nothing to check
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    usable = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    known = [p.name for p in parameters if p.kind in usable] + ["name", *GRADING_KEYS]
    for key in options:
        if key not in known:
            raise ConfigError(f"{where}.{key}: {unknown_key(key, known)}")


def scorer_entry(item: Any, index: int) -> ScorerEntry:
    """The serialisable entry of a scorer given to ``run()``, or a :class:`ConfigError` naming
    ``scorers[index]`` (a scorer with no import path and no registered name)."""
    field = f"scorers[{index}]"
    if isinstance(item, str | dict):
        return item
    if isinstance(item, Scorer):
        registered = _registered(item)
        if registered and is_builtin(item):
            return item.name
        if item.grading and not item.options and _registered_fn(item) and is_builtin(item):
            # a built-in given its own threshold or weight: its name with them
            return {item.name: dict(item.grading)}
        if item.options and not registered:
            raise ConfigError(
                f"{field}: {brief(item)} has bound options; register it with @scorer(name=...) "
                "or give it as a mapping {name: {options}}"
            )
    try:
        return reference_of(item, field)
    except ConfigError:
        # registered in this process only (a notebook, a script): its name works here
        if isinstance(item, Scorer) and _registered(item):
            return item.name
        raise


def _registered_fn(item: Scorer) -> bool:
    """Whether ``item`` is the scorer registered under its name, but for its grading."""
    try:
        found = get_scorer(item.name)
    except ConfigError:
        return False
    return found.fn is item.fn and found.options == item.options and not found.grading


def _registered(item: Scorer) -> bool:
    try:
        return get_scorer(item.name) is item
    except ConfigError:
        return False


def is_builtin(item: Scorer) -> bool:
    """Whether a scorer's function comes with aieval (any process resolves its name)."""
    module = getattr(item.fn, "__module__", None) or type(item.fn).__module__
    return isinstance(module, str) and (module == "aieval" or module.startswith("aieval."))
