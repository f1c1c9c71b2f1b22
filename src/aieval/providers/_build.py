"""One call that turns a provider name or instance into the stack a run uses."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aieval.errors import ConfigError
from aieval.providers._base import Provider
from aieval.providers._cache import CachedProvider, ResponseCache
from aieval.providers._credentials import check_env_name, given_key
from aieval.providers._headers import check_headers
from aieval.providers._registry import accepts_argument, get_provider
from aieval.providers._resilient import ResilientProvider
from aieval.providers._retry import RetryPolicy
from aieval.store import StoreLocation

__all__ = ["build_provider"]


def build_provider(
    spec: str | Provider,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    retries: int = 3,
    concurrency: int = 16,
    cache: bool | str | Path | ResponseCache = True,
    cache_path: str | Path | StoreLocation = "aieval.db",
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """Build ``Cached(Resilient(provider))`` from a provider name or a ready provider.

    Args:
        spec: a preset or registered name (``"openai"``, ``"vllm"``, ...) or a Provider.
        base_url: overrides the preset's endpoint (names only).
        api_key: overrides the preset's environment variable (names only).
        api_key_env: the name of the environment variable holding the key, instead of
            ``api_key`` (names only); unset or empty, it is a :class:`ConfigError` naming it.
        retries: retries per call for 429, 5xx, timeouts and connection failures.
        concurrency: the most calls in flight; lowered automatically under 429s.
        cache: ``True`` caches deterministic calls in ``cache_path``; a path or a
            :class:`ResponseCache` chooses the store; ``False`` turns caching off.
        cache_path: the store (an SQLite file or a ``postgresql://`` URL) used when ``cache``
            is ``True``.
        timeout: seconds per attempt (names only; an instance keeps its own).
        headers: HTTP headers for every request (names only); a provider whose factory
            takes no ``headers`` refuses them with a :class:`ConfigError`.

    Returns:
        A provider to call from the run and to ``aclose()`` when the run ends.

    Example:
        >>> provider = build_provider("vllm", cache=False)
        >>> provider.name
        'vllm'
    """
    if isinstance(spec, str):
        raw = _from_name(
            spec,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            timeout=timeout,
            headers=headers,
        )
    elif isinstance(spec, Provider):
        if base_url is not None or api_key is not None or api_key_env is not None or headers:
            raise ConfigError(
                "base_url=, api_key=, api_key_env= and headers= apply to a provider name; "
                f"configure the provider instance {spec!r} directly instead"
            )
        raw = spec
    else:
        raise ConfigError(
            f"provider must be a name or an object with `name` and async `generate()`, got {spec!r}"
        )
    if isinstance(raw, CachedProvider):
        if cache is False:
            # its cache would answer anyway: refuse rather than silently cache
            raise ConfigError(
                f"cache=False, but the provider {raw.name!r} was built with a response cache "
                "(build_provider(..., cache=...)); build it with cache=False, or drop cache=False"
            )
        return raw
    resilient = raw
    if not isinstance(raw, ResilientProvider):
        policy = RetryPolicy(max_retries=retries)
        resilient = ResilientProvider(raw, retry=policy, max_concurrency=concurrency)
    if cache is False:
        return resilient
    store: ResponseCache | str | Path | StoreLocation = cache_path if cache is True else cache
    return CachedProvider(resilient, store)


def _from_name(
    name: str,
    *,
    base_url: str | None,
    api_key: str | None,
    api_key_env: str | None,
    timeout: float,
    headers: Mapping[str, str] | None,
) -> Provider:
    kwargs: dict[str, object] = {}
    if api_key_env is not None:
        check_env_name(api_key_env)
        if accepts_argument(name, "api_key_env", by_name=True):
            kwargs["api_key_env"] = api_key_env
        else:  # a factory of its own: it gets the key itself
            api_key, _ = given_key(name, api_key, api_key_env)
    if headers:
        if not accepts_argument(name, "headers"):
            raise ConfigError(
                f"provider {name!r} takes no headers: it cannot send the HTTP headers "
                f"{sorted(headers)}; drop them or use a provider that sends headers"
            )
        kwargs["headers"] = check_headers(headers, "headers")
    if base_url is not None:
        kwargs["base_url"] = base_url
    if api_key is not None:
        kwargs["api_key"] = api_key
    if accepts_argument(name, "timeout"):
        kwargs["timeout"] = timeout
    return get_provider(name, **kwargs)
