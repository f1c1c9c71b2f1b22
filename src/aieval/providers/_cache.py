"""A response cache for deterministic model calls, in the run store's database."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aieval._secrets import redact_text, secret_values, secrets_of, url_without_credentials
from aieval.core import ToolCall
from aieval.providers._base import ChatRequest, ChatResponse, Provider
from aieval.providers._gate import sent
from aieval.providers._wrapper import Wrapper
from aieval.store import MEMORY, SideTable, StoreLocation

__all__ = [
    "CachedProvider",
    "ResponseCache",
    "cache_key",
    "headers_digest",
    "is_deterministic",
]


def is_deterministic(request: ChatRequest) -> bool:
    """Whether a request may be answered from the cache: temperature 0, or a ``seed`` param.

    >>> is_deterministic(ChatRequest(model="m", messages=[], temperature=0))
    True
    >>> is_deterministic(ChatRequest(model="m", messages=[]))
    False
    """
    return request.temperature == 0 or "seed" in request.params


def provider_identity(provider: Provider) -> str:
    """The part of a cache key that names the endpoint: the provider's name and base URL."""
    base_url = getattr(provider, "base_url", None)
    # the identity is stored in the cache's provider column: never with URL credentials
    return f"{provider.name}|{url_without_credentials(base_url) if base_url else ''}"


def headers_digest(headers: Mapping[str, str] | None) -> str | None:
    """SHA-256 of a provider's own HTTP headers (names lower-cased, sorted), or ``None``.

    Two endpoints that differ only in a header (a tenant, a routing key) may answer
    differently, so a provider's headers belong in its cache keys; only this digest does,
    never a value.

    >>> headers_digest({"X-A": "1", "X-B": "2"}) == headers_digest({"x-b": "2", "x-a": "1"})
    True
    >>> headers_digest({}) is None
    True
    """
    if not headers:
        return None
    pairs = sorted((name.lower(), value) for name, value in headers.items())
    canonical = json.dumps(pairs, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _key_identity(provider: Provider) -> str:
    """:func:`provider_identity` plus what else of the provider changes its requests: the
    digest of its own headers (``headers_digest``) and its request settings off their defaults
    (``cache_settings``), as declared by it or by the provider a wrapper holds in ``inner``.
    A provider with neither keeps the key it always had."""
    identity = provider_identity(provider)
    digest: str | None = None
    settings: Mapping[str, Any] | None = None
    component: Any = provider
    for _ in range(16):  # wrappers nest a few deep, never in a cycle
        if component is None:
            break
        if digest is None:
            found = getattr(component, "headers_digest", None)
            digest = found if isinstance(found, str) and found else None
        if settings is None:
            declared = getattr(component, "cache_settings", None)
            settings = declared if isinstance(declared, Mapping) and declared else None
        component = getattr(component, "inner", None)
    if digest is not None:
        identity = f"{identity}|headers:{digest}"
    if settings is not None:
        canonical = json.dumps(
            dict(settings), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
        identity = f"{identity}|settings:{canonical}"
    return identity


def cache_key(identity: str, request: ChatRequest) -> str:
    """SHA-256 of the canonical JSON of everything that determines the answer (never the key).

    A request's own ``headers`` are part of it (a gateway may route on them); only the digest
    is stored, never a header value. Requests without headers keep their earlier keys.
    """
    material: dict[str, Any] = {
        "provider": identity,
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "response_schema": request.response_schema,
        "params": request.params,
        "cache_salt": request.cache_salt,
    }
    if request.headers:
        material["headers"] = {k.lower(): v for k, v in request.headers.items()}
    canonical = json.dumps(
        material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """Stores completions in the ``response_cache`` table of a store's database.

    The database may be the run store's (an SQLite file in WAL mode, or a PostgreSQL database
    that a team's runs share): only this table is touched. Several caches (or processes) can
    use one at once. The connection opens on first use and reopens after :meth:`close`.

    Args:
        path: an SQLite file (created with its parent folders if missing) or a
            ``postgresql://`` URL. ``":memory:"`` (see :meth:`in_memory`) keeps the answers in
            this process only, in no file.
    """

    def __init__(self, path: str | Path | StoreLocation) -> None:
        self._table = SideTable(path, "response_cache", "response cache")
        self.location = self._table.location
        #: the SQLite file (``None`` for a PostgreSQL database)
        self.path = self.location.path

    @classmethod
    def in_memory(cls) -> ResponseCache:
        """A cache that lives in this object only and writes no file (a run without a store)."""
        return cls(MEMORY)

    @property
    def memory(self) -> bool:
        """Whether this cache is held in memory, with no file."""
        return str(self.location) == MEMORY

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.location)!r})"

    def get(self, key: str) -> ChatResponse | None:
        """The stored response for ``key`` marked ``cached=True``, or ``None``.

        It keeps the original call's usage, cost and ``latency_s`` (0 for an entry stored
        before latencies were kept).
        """
        rows = self._table.query("SELECT response FROM response_cache WHERE key = ?", (key,))
        if not rows:
            return None
        data: dict[str, Any] = json.loads(rows[0][0])
        return ChatResponse(
            text=data["text"],
            model=data["model"],
            input_tokens=data.get("input_tokens"),
            output_tokens=data.get("output_tokens"),
            finish_reason=data.get("finish_reason"),
            cost=data.get("cost"),
            latency_s=float(data.get("latency_s") or 0.0),
            retries=0,
            cached=True,
            tool_calls=tuple(ToolCall(**call) for call in data.get("tool_calls") or ()),
        )

    def put(self, key: str, provider: str, response: ChatResponse) -> None:
        """Store a successful response under ``key``."""
        data: dict[str, Any] = {
            "text": response.text,
            "model": response.model,
            "input_tokens": response.input_tokens,
            "output_tokens": response.output_tokens,
            "finish_reason": response.finish_reason,
            "cost": response.cost,
            "latency_s": response.latency_s,
        }
        if response.tool_calls:  # only then: entries without calls stay as they were
            data["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
            ]
        row = (key, provider, response.model, self._table.to_json(data), time.time())
        self._table.execute(
            "INSERT INTO response_cache (key, provider, model, response, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET provider = excluded.provider,"
            " model = excluded.model, response = excluded.response,"
            " created_at = excluded.created_at",
            row,
        )

    def __len__(self) -> int:
        rows = self._table.query("SELECT COUNT(*) FROM response_cache")
        return int(rows[0][0])

    def clear(self) -> None:
        """Delete every cached response (other tables in the database are untouched)."""
        self._table.execute("DELETE FROM response_cache", action="clear")

    def close(self) -> None:
        """Close the connection (the next use reopens it)."""
        self._table.close()


class CachedProvider(Wrapper):
    """Answers deterministic requests from a :class:`ResponseCache`, else asks ``inner``.

    Only requests with ``temperature == 0`` or a ``seed`` param are cached; failures are never
    stored. A hit returns ``cached=True`` with the original call's usage, cost and latency. The
    key names the endpoint (name and base URL) and, for a provider with HTTP headers of its own,
    a digest of them (a provider declares it as ``headers_digest``; see :func:`headers_digest`),
    and its settings that change what is sent, where not on their defaults (declared as a
    ``cache_settings`` mapping, e.g. ``{"supports_json_schema": False}``).

    Args:
        inner: the provider to call on a miss.
        cache: a cache, or a path to open one at (then closed by :meth:`aclose`).
    """

    def __init__(self, inner: Provider, cache: ResponseCache | str | Path | StoreLocation) -> None:
        self.inner = inner
        self._owns_cache = not isinstance(cache, ResponseCache)
        self.cache = cache if isinstance(cache, ResponseCache) else ResponseCache(cache)
        self.name = inner.name
        self._identity = provider_identity(inner)  # the provider column: no header digest

    def __repr__(self) -> str:
        return f"CachedProvider({self.inner!r}, cache={self.cache!r})"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Return the cached answer, or call ``inner`` and cache a deterministic success."""
        if not is_deterministic(request):
            return await sent(self.inner, request)
        # read per call: a provider's settings are attributes, and may change after wrapping
        key = cache_key(_key_identity(self.inner), request)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        # a miss is sent: through the call gate, unless the inner provider passes it there
        response = await sent(self.inner, request)
        # a model that repeats its request must not carry a credential into the cache file
        secrets = secrets_of(self.inner) | secret_values(
            {"params": request.params, "headers": request.headers}
        )
        stored = dataclasses.replace(
            response,
            text=redact_text(response.text, secrets),
            tool_calls=tuple(
                dataclasses.replace(c, arguments=redact_text(c.arguments, secrets))
                for c in response.tool_calls
            ),
        )
        self.cache.put(key, self._identity, stored)
        return response

    async def aclose(self) -> None:
        """Close the wrapped provider (and the cache, if this wrapper opened it)."""
        try:
            await self.inner.aclose()
        finally:
            if self._owns_cache:
                self.cache.close()
