"""``run()``'s keyword arguments as a :class:`RunSpec` plus the live objects beside it.

The spec describes the run (it is stored with it, and shipped to Ray workers); the live parts
are what a spec cannot hold: objects given in place of names (a provider instance, a
``datasets.Dataset``, a scorer object without an import path) and run-time hooks (the store
object, a progress callback, a tracer provider, an executor, observers). For each field, a
live object wins over the spec's description of it, and :attr:`LiveParts.unspecified` says
which spec fields only approximate what was given, and why.
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
from aieval.runner._ray import RayExecutor
from aieval.runner._spec import RunSpec, _scorer_entry, reference_of
from aieval.scorers import Scorer
from aieval.store import Store

__all__ = ["EXECUTORS", "LiveParts", "ProgressCallback", "split_arguments", "stored_spec"]

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


def split_arguments(arguments: dict[str, Any]) -> tuple[RunSpec, LiveParts]:
    """Validate ``run_async``'s keyword arguments into a spec and its live parts.

    Raises:
        ConfigError: an invalid value, naming its field.
    """
    data = dict(arguments)
    live = LiveParts(
        progress=data.pop("progress", None),
        tracer_provider=data.pop("tracer_provider", None),
    )
    missing = live.unspecified
    executor = data.get("executor")
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
        if data.get("ray_address") is not None:
            raise ConfigError(
                "ray_address: give the cluster to the executor object "
                "(RayExecutor(address=...)), not beside it"
            )
        live.executor = executor
        if isinstance(executor, RayExecutor):
            data["executor"], data["ray_address"] = "ray", executor.address
        else:
            data["executor"] = "local"
            missing["executor"] = f"a {type(executor).__name__} object runs the samples"
    scorers = data.get("scorers")
    live.scorers = scorers
    data["scorers"] = _describe_scorers(scorers, missing)
    provider = data.get("provider")
    if provider is not None and not isinstance(provider, str):
        live.provider = provider
        data["provider"] = getattr(provider, "name", None)
        missing["provider"] = "a Provider object (give a provider name to describe it)"
    target = data.get("target")
    if target is not None:
        live.target, data["target"] = target, _reference(target, "target", missing)
    store = data.get("store")
    if isinstance(store, Store):
        live.store, data["store"] = store, str(store.path)
    elif isinstance(store, Path):
        data["store"] = str(store)
    for key in ("workflow", "profile"):
        value = data.get(key)
        if isinstance(value, Path):
            data[key] = str(value)
        elif value is not None and not isinstance(value, str | dict):
            setattr(live, key, value)
            data[key] = None
            missing[key] = f"a {type(value).__name__} object (give its file to describe it)"
    data["metadata"] = data.get("metadata") or {}
    data["params"] = data.get("params") or {}
    dataset = data.pop("dataset")
    spec = RunSpec.parse({**data, "dataset": ""}, source="run()")
    # rows are not copied (nor validated twice: the dataset reads them); a path is a string
    if isinstance(dataset, Path):
        dataset = str(dataset)
    if not isinstance(dataset, str | list):
        live.dataset = dataset
        missing["dataset"] = f"a {type(dataset).__name__} object (give a file to describe it)"
        dataset = ""
    return spec.model_copy(update={"dataset": dataset}), live


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
    if data.get("base_url"):
        data["base_url"] = url_without_credentials(data["base_url"])
    return redact_data(without_secrets(data), secrets), missing


def _describe_scorers(scorers: Any, missing: dict[str, str]) -> list[Any]:
    if not isinstance(scorers, list | tuple):
        return []  # refused with its own message when the scorers are resolved
    entries: list[Any] = []
    for i, item in enumerate(scorers):
        try:
            entries.append(_scorer_entry(item, i))
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
