"""``run()``'s keyword arguments as a :class:`RunSpec` plus the live objects beside it.

The spec describes the run (it is stored with it, and shipped to Ray workers); the live parts
are what a spec cannot hold: objects given in place of names (a provider instance, a
``datasets.Dataset``, a scorer object without an import path) and run-time hooks (the store
object, a progress callback, a tracer provider, an executor, observers).
:attr:`LiveParts.unspecified` says which spec fields only approximate what was given, and why.
:func:`resolve_parts` decides once, for each part, between the live object and the spec's
description of it: the run reads the resulting :class:`RunParts` only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval._secrets import redact_data, url_without_credentials, without_secrets
from aieval.core import RunObserver
from aieval.errors import ConfigError
from aieval.providers import Provider
from aieval.runner._executor import Executor
from aieval.runner._imports import import_file
from aieval.runner._provenance import EvalFileRef
from aieval.runner._ray import RayExecutor
from aieval.runner._references import reference_of, resolve_scorers, scorer_entry
from aieval.runner._spec import RunSpec
from aieval.scorers import Scorer
from aieval.store import Store, StoreLocation

__all__ = [
    "EXECUTORS",
    "Described",
    "LiveParts",
    "ProgressCallback",
    "RunParts",
    "resolve_parts",
    "split_live",
    "stored_spec",
]

#: The executors a run names: this process's event loop, or Ray workers.
EXECUTORS = ("local", "ray")

#: Called after each sample with (samples done, total samples).
ProgressCallback = Callable[[int, int], None]


@dataclass(slots=True)
class LiveParts:
    """What a run uses beside its :class:`RunSpec` (``None``: the spec's field is used)."""

    scorers: Sequence[Any] | None = None
    dataset: Any = None
    provider: Provider | None = None
    target: Callable[..., Any] | None = None
    workflow: Any = None
    profile: Any = None
    store: Store | None = None
    progress: ProgressCallback | None = None
    tracer_provider: Any = None
    executor: Executor | None = None
    #: observers of this run, beside those of the ``aieval.observers`` plug-ins
    observers: Sequence[RunObserver] = ()
    #: spec fields that only describe a live object: field -> why it cannot be serialised
    unspecified: dict[str, str] = field(default_factory=dict)
    #: the eval file the run was made from (recorded with the run as provenance)
    eval_file: EvalFileRef | None = None


@dataclass(frozen=True, slots=True)
class RunParts:
    """The run's parts as objects, each resolved once: the live object given to ``run()``,
    else what the spec describes (scorers resolved, after the spec's ``imports``)."""

    dataset: Any
    scorers: list[Scorer]
    provider: Provider | str | None
    target: Callable[..., Any] | None
    workflow: Any
    profile: Any
    #: an open store given to ``run()``, else the spec's ``storage.store`` (opened when it starts)
    store: Store | str | bool | None


def resolve_parts(spec: RunSpec, live: LiveParts) -> RunParts:
    """Each part of the run, from ``live`` where an object was given, else from ``spec``.

    Raises:
        ConfigError: a scorer entry that does not resolve (named).
    """
    for file in spec.scoring.imports:
        import_file(file)
    scoring = spec.scoring
    return RunParts(
        dataset=_given(live.dataset, spec.dataset),
        scorers=resolve_scorers(_given(live.scorers, scoring.scorers)),
        provider=_given(live.provider, spec.target.provider),
        target=live.target,  # the spec's import path is imported with the target
        workflow=_given(live.workflow, scoring.workflow),
        profile=_given(live.profile, scoring.profile),
        store=_given(live.store, spec.storage.store),
    )


def _given(live: Any, described: Any) -> Any:
    return described if live is None else live


@dataclass(frozen=True, slots=True)
class Described:
    """How a spec describes the ``run()`` arguments that may be live objects."""

    dataset: str | list[dict[str, Any]]
    scorers: list[Any]
    provider: str | None
    function: str | None
    store: str | bool | None
    workflow: str | dict[str, Any] | None
    profile: str | None
    executor: str | None
    ray_address: str | None


def split_live(
    *,
    dataset: Any,
    scorers: Any,
    provider: Any = None,
    target: Any = None,
    store: Any = None,
    workflow: Any = None,
    profile: Any = None,
    executor: Any = "local",
    ray_address: str | None = None,
    progress: ProgressCallback | None = None,
    tracer_provider: Any = None,
) -> tuple[Described, LiveParts]:
    """The ``run()`` arguments that may be objects, split into their description in a spec and
    the live objects beside it (:attr:`LiveParts.unspecified` names what a description lacks).

    Raises:
        ConfigError: an unknown executor, or a Ray address beside an executor object.
    """
    live = LiveParts(progress=progress, tracer_provider=tracer_provider, scorers=scorers)
    missing = live.unspecified
    if isinstance(executor, str) and executor not in EXECUTORS:
        raise ConfigError(
            f"executor: unknown executor {executor!r}; use one of {', '.join(EXECUTORS)} "
            "(or pass an Executor object)"
        )
    if executor is not None and not isinstance(executor, str):
        if not callable(getattr(executor, "map", None)):
            raise ConfigError(
                f"executor: expected 'local', 'ray' or an Executor, got {type(executor).__name__}"
            )
        if ray_address is not None:
            raise ConfigError(
                "ray_address: give the cluster to the executor object "
                "(RayExecutor(address=...)), not beside it"
            )
        live.executor = executor
        if isinstance(executor, RayExecutor):
            executor, ray_address = "ray", executor.address
        else:
            missing["executor"] = f"a {type(executor).__name__} object runs the samples"
            executor = "local"
    if provider is not None and not isinstance(provider, str):
        live.provider = provider
        missing["provider"] = "a Provider object (give a provider name to describe it)"
        provider = getattr(provider, "name", None)
    function = None
    if target is not None:
        live.target, function = target, _reference(target, "target", missing)
    if isinstance(store, Store):
        live.store, store = store, str(store.location)
    elif isinstance(store, Path | StoreLocation):
        store = str(store)
    workflow = _describe_file(workflow, "workflow", live)
    profile = _describe_file(profile, "profile", live)
    # rows are not copied (nor validated twice: the dataset reads them); a path is a string
    if isinstance(dataset, Path):
        dataset = str(dataset)
    if not isinstance(dataset, str | list):
        live.dataset = dataset
        missing["dataset"] = f"a {type(dataset).__name__} object (give a file to describe it)"
        dataset = ""
    described = Described(
        dataset=dataset,
        scorers=_describe_scorers(scorers, missing),
        provider=provider,
        function=function,
        store=store,
        workflow=workflow,
        profile=profile,
        executor=executor,
        ray_address=ray_address,
    )
    return described, live


def _describe_file(value: Any, key: str, live: LiveParts) -> Any:
    """A workflow or profile as a spec names it (a path as a string); an object is live."""
    if isinstance(value, Path):
        return str(value)
    if value is not None and not isinstance(value, str | dict):
        setattr(live, key, value)
        live.unspecified[key] = f"a {type(value).__name__} object (give its file to describe it)"
        return None
    return value


def stored_spec(
    spec: RunSpec, unspecified: Mapping[str, str], secrets: frozenset[str], source: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The spec as the store keeps it, and what it lacks to run again.

    Credentials are never stored (by key, by value, in URLs); inline rows are not kept (the
    samples hold them), the dataset is named by ``source`` instead.
    """
    missing = dict(unspecified)
    inline = isinstance(spec.dataset, list)
    data = spec.model_dump(mode="json", fallback=str, exclude={"dataset"} if inline else None)
    if inline:
        data["dataset"] = source
        missing["dataset"] = f"inline rows ({len(spec.dataset)}) are not kept with the spec"
    for path in _secret_paths(data):
        missing[path] = "credentials are never stored; give them again"
    if data["target"].get("base_url"):
        data["target"]["base_url"] = url_without_credentials(data["target"]["base_url"])
    return redact_data(without_secrets(data), secrets), missing


def _describe_scorers(scorers: Any, missing: dict[str, str]) -> list[Any]:
    if not isinstance(scorers, list | tuple):
        return []  # refused with its own message when the scorers are resolved
    entries: list[Any] = []
    for i, item in enumerate(scorers):
        try:
            entries.append(scorer_entry(item, i))
        except ConfigError as exc:
            missing[f"scorers[{i}]"] = str(exc).partition(": ")[2]
            entries.append(item.name if isinstance(item, Scorer) else _name(item))
    return entries


def _reference(obj: Any, name: str, missing: dict[str, str]) -> str | None:
    try:
        return reference_of(obj, name)
    except ConfigError as exc:
        missing[name] = str(exc).partition(": ")[2]
        return None


def _name(obj: Any) -> str:
    return str(getattr(obj, "__name__", None) or type(obj).__name__)


def _secret_paths(data: Any, prefix: str = "") -> list[str]:
    """Where credential keys hold a value in JSON-like ``data`` (``params.api_key``...)."""
    from aieval._secrets import is_secret_key

    found: list[str] = []
    if isinstance(data, Mapping):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(key, str) and is_secret_key(key) and value is not None:
                found.append(path)
            else:
                found += _secret_paths(value, path)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += _secret_paths(value, f"{prefix}[{i}]")
    return found
