"""Provider names: presets, registered factories and ``aieval.providers`` entry points."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from aieval.core import GROUPS, load_plugin, plugin_names
from aieval.errors import ConfigError, ProviderNotFoundError
from aieval.providers._base import Provider
from aieval.providers._presets import PRESETS

__all__ = [
    "ENTRY_POINT_GROUP",
    "ProviderFactory",
    "available_providers",
    "get_provider",
    "register_provider",
]

ENTRY_POINT_GROUP = GROUPS["providers"]

ProviderFactory = Callable[..., Provider]
"""Anything called with keyword arguments (``base_url``, ``api_key``, ...) returning a Provider."""

_registry: dict[str, ProviderFactory] = dict(PRESETS)


def register_provider(name: str, factory: ProviderFactory) -> ProviderFactory:
    """Make ``get_provider(name, **kwargs)`` call ``factory(**kwargs)``; replaces an existing name.

    Returns the factory, so this also works as ``register_provider("mine", MyProvider)`` on a
    class.

    >>> from aieval.providers import OpenAIProvider
    >>> _ = register_provider("local", lambda **kw: OpenAIProvider("http://localhost:9000/v1"))
    >>> "local" in available_providers()
    True
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"a provider name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise ConfigError(f"provider {name!r}: the factory must be callable, got {factory!r}")
    _registry[name] = factory
    return factory


def available_providers() -> list[str]:
    """Sorted names of every preset, registered provider and installed entry point."""
    return sorted(set(_registry) | set(plugin_names(ENTRY_POINT_GROUP)))


_checked: set[str] = set()


def _factory(name: str) -> ProviderFactory:
    factory = _registry.get(name)
    if factory is not None and name in PRESETS and name not in _checked:
        # an installed plug-in with a preset's name would otherwise be ignored unnoticed
        if name in plugin_names(ENTRY_POINT_GROUP):
            plugged = load_plugin(ENTRY_POINT_GROUP, name)
            if plugged is not None and plugged is not factory:
                raise ConfigError(
                    f"provider plug-in {name!r} ({ENTRY_POINT_GROUP}) has the name of aieval's "
                    f"built-in provider {name!r}: rename the entry point, so that neither "
                    "replaces the other unnoticed"
                )
        _checked.add(name)
    if factory is not None:
        return factory
    loaded = load_plugin(ENTRY_POINT_GROUP, name)
    if loaded is None:
        known = ", ".join(available_providers())
        raise ProviderNotFoundError(
            f"unknown provider {name!r}; known providers: {known}. Register one with "
            f"register_provider() or the {ENTRY_POINT_GROUP!r} entry point group, or use "
            "'openai-compatible' with base_url="
        )
    return register_provider(name, loaded)


def get_provider(name: str, /, **kwargs: Any) -> Provider:
    """Build the provider registered as ``name`` with ``kwargs`` (e.g. ``base_url``, ``api_key``).

    Credentials are checked here, so a run with a missing key fails before its first sample.

    Raises:
        ProviderNotFoundError: no preset, registration or entry point has that name.
        ProviderAuthError: the preset needs an API key and none is set.
        ConfigError: a bad argument, or a factory that does not return a provider.
    """
    factory = _factory(name)
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"provider {name!r}: {exc}") from exc
    except ValueError:
        pass  # no introspectable signature (some builtins): let the call decide
    provider = factory(**kwargs)
    if not isinstance(provider, Provider):
        raise ConfigError(
            f"provider {name!r}: its factory returned {type(provider).__name__}, which has no "
            "`name` and async `generate()`/`aclose()`"
        )
    return provider


def accepts_argument(name: str, argument: str, *, by_name: bool = False) -> bool:
    """Whether the factory registered as ``name`` takes ``argument`` as a keyword (with
    ``by_name``, only as a parameter of that name, not through ``**kwargs``)."""
    factory = _factory(name)  # an unknown or broken provider is an error, not "no argument"
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return not by_name
    return any(p.name == argument or (p.kind is p.VAR_KEYWORD and not by_name) for p in parameters)
