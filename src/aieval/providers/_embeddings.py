"""A client for any endpoint that speaks the OpenAI embeddings HTTP API (``POST /embeddings``).

It retries as the chat providers do (:class:`~aieval.providers.RetryPolicy`: 429 with its
``Retry-After``, 5xx, timeouts and connection failures, with back-off) and answers texts it has
embedded before from an :class:`~aieval.providers._embedding_cache.EmbeddingCache`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aieval._secrets import url_without_credentials
from aieval.errors import (
    ConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from aieval.providers._credentials import check_key_and_headers
from aieval.providers._embedding_cache import EmbeddingCache, embedding_key
from aieval.providers._gate import gated
from aieval.providers._http import error_for_status, error_message, redact
from aieval.providers._retry import RetryPolicy
from aieval.providers._session import LoopSession

if TYPE_CHECKING:
    import aiohttp

__all__ = ["Embeddings", "OpenAIEmbeddings"]

logger = logging.getLogger("aieval.providers")


@dataclass(slots=True, frozen=True)
class Embeddings:
    """The vectors of some texts, in their order, and what getting them took.

    Attributes:
        vectors: one vector per text.
        model: the model that answered (as the endpoint reports it; the asked one if cached).
        input_tokens: usage the endpoint reported, if any (``None`` when all were cached).
        latency_s: wall time, from the first attempt to the answer (0 when all were cached).
        retries: failed attempts before the answer.
        cached: how many of the texts came from the cache.
    """

    vectors: list[list[float]]
    model: str
    input_tokens: int | None = None
    latency_s: float = 0.0
    retries: int = 0
    cached: int = 0


class OpenAIEmbeddings:
    """Calls ``POST {base_url}/embeddings`` (OpenAI, vLLM, Ollama, llama.cpp, TEI, gateways).

    Args:
        base_url: the API root, e.g. ``"http://localhost:8000/v1"``.
        api_key: sent as a bearer token; never shown in ``repr``, logs or errors.
        name: the endpoint's name in messages.
        timeout: seconds for one attempt.
        retry: when and how long to wait between attempts (default: :class:`RetryPolicy`).
        cache: an :class:`EmbeddingCache`, a SQLite file for one, or ``None`` for no cache.
        headers: extra request headers, e.g. a gateway's credential header (their values are
            redacted from errors like the key; a key and an ``Authorization`` header are refused
            together).

    >>> OpenAIEmbeddings("http://localhost:8000/v1", api_key="sk-secret")
    OpenAIEmbeddings(name='openai', base_url='http://localhost:8000/v1', api_key='***')
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        name: str = "openai",
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        cache: EmbeddingCache | str | Path | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        check_key_and_headers(name, api_key, headers)
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"embeddings: base_url must start with http(s)://, got {base_url!r}")
        if timeout <= 0:
            raise ConfigError(f"embeddings: timeout must be > 0 seconds, got {timeout!r}")
        self.name = name
        self.base_url = url_without_credentials(base_url.rstrip("/"))
        self.timeout = timeout
        self.retry = retry if retry is not None else RetryPolicy()
        self._url = base_url.rstrip("/") + "/embeddings"
        self._api_key = api_key or None
        self._headers = dict(headers or {})
        self._owns_cache = cache is not None and not isinstance(cache, EmbeddingCache)
        self.cache = EmbeddingCache(cache) if isinstance(cache, str | Path) else cache
        self._session = LoopSession(self._new_session)

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return f"OpenAIEmbeddings(name={self.name!r}, base_url={self.base_url!r}, api_key={key})"

    async def embed(self, model: str, texts: Sequence[str]) -> Embeddings:
        """The embeddings of ``texts`` by ``model``: cached ones from the cache, the rest in one
        request (retried per the policy); a final failure raises its
        :class:`~aieval.errors.ProviderError` (``retries`` says how many were made)."""
        identity = f"{self.name}|{self.base_url}"
        keys = [embedding_key(identity, model, text) for text in texts]
        known = self.cache.get_many(list(set(keys))) if self.cache is not None else {}
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in known))
        if not missing:
            return Embeddings([known[k] for k in keys], model, cached=len(texts))
        fresh, answered = await self._retried(model, missing)
        new = {embedding_key(identity, model, t): v for t, v in zip(missing, fresh, strict=True)}
        if self.cache is not None:
            self.cache.put_many(model, new)
        vectors = [known.get(k) or new[k] for k in keys]
        return Embeddings(
            vectors,
            answered.model,
            answered.input_tokens,
            answered.latency_s,
            answered.retries,
            cached=len(texts) - sum(1 for k in keys if k in new),
        )

    async def _retried(self, model: str, texts: list[str]) -> tuple[list[list[float]], Embeddings]:
        retries = 0
        started = time.perf_counter()
        while True:
            try:
                # each request sent is a call: the call gate (if any) reserves it first
                answer = await gated(
                    lambda: self._request(model, texts), lambda a: (a.input_tokens, None)
                )
            except ProviderError as error:
                if not self.retry.should_retry(error, retries):
                    error.retries = retries
                    raise
                delay = self.retry.delay(retries, error)
                retries += 1
                logger.info(
                    "%s embeddings: retry %d/%d in %.2f s after: %s",
                    self.name,
                    retries,
                    self.retry.max_retries,
                    delay,
                    error,
                )
                await asyncio.sleep(delay)
                continue
            latency = time.perf_counter() - started
            return answer.vectors, Embeddings(
                [], answer.model, answer.input_tokens, latency, retries
            )

    async def _request(self, model: str, texts: list[str]) -> Embeddings:
        import aiohttp

        body = json.dumps({"model": model, "input": texts, "encoding_format": "float"})
        secrets = {v for v in (self._api_key, *self._headers.values()) if v}
        session = self._session.get()
        try:
            async with session.post(self._url, data=body.encode("utf-8", "surrogatepass")) as resp:
                raw = await resp.read()
                status, headers = resp.status, resp.headers
        except TimeoutError as exc:
            raise ProviderTimeoutError(
                f"{self.name}: no embeddings from {self.base_url} within {self.timeout:g} s"
            ) from exc
        except aiohttp.ClientError as exc:
            raise ProviderConnectionError(
                redact(f"{self.name}: cannot reach {self.base_url}: {exc}", secrets)
            ) from exc
        if status >= 400:
            raise error_for_status(
                self.name, status, error_message(raw, secrets), headers, api_key=self._api_key
            )
        return self._parse(raw, model, len(texts), secrets)

    def _parse(self, raw: bytes, model: str, count: int, secrets: set[str]) -> Embeddings:
        def bad(reason: str) -> ProviderResponseError:
            return ProviderResponseError(redact(f"{self.name} embeddings: {reason}", secrets))

        try:
            data: Any = json.loads(raw)
            items = sorted(data["data"], key=lambda item: int(item["index"]))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise bad(f"no embeddings in the answer: {raw[:200]!r}") from exc
        if len(vectors) != count:
            raise bad(f"{len(vectors)} embeddings for {count} texts")
        if any(not v or not all(math.isfinite(x) for x in v) for v in vectors):
            raise bad("an embedding is empty or not finite")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        tokens = usage.get("prompt_tokens")
        answered = data.get("model")
        return Embeddings(
            vectors,
            answered if isinstance(answered, str) and answered else model,
            tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
        )

    def _new_session(self) -> aiohttp.ClientSession:
        import aiohttp

        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self._headers)
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            skip_auto_headers=("User-Agent",),
        )

    async def aclose(self) -> None:
        """Close the HTTP session (and the cache, if this client opened it)."""
        await self._session.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()
