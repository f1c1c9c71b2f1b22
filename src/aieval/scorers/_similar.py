"""The ``similar`` check: cosine similarity of embeddings from an OpenAI-compatible endpoint.

Embeddings come from ``POST {base_url}/embeddings`` (any OpenAI-compatible server: a local
vLLM, Ollama, llama.cpp or text-embeddings-inference works offline), retried like the chat
providers and cached in the run's store (in memory outside a run, or for a run without one).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np

from aieval._endpoint import current_endpoint
from aieval._types import Score
from aieval.errors import ConfigError, ProviderError, ScorerError
from aieval.providers import EmbeddingCache, OpenAIEmbeddings, RetryPolicy
from aieval.scorers._answers import text_of
from aieval.scorers._check import check, outcome, reference_text
from aieval.store import MEMORY

__all__ = ["DEFAULT_EMBEDDING_BASE_URL", "DEFAULT_EMBEDDING_MODEL", "similar"]

#: Where embeddings are asked for when neither the check nor the run names an endpoint.
DEFAULT_EMBEDDING_BASE_URL = "https://api.openai.com/v1"
#: The ``embedding_model`` when the check names none.
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"

_clients: dict[tuple[str, str | None, int, str | None], OpenAIEmbeddings] = {}


def _valid(options: dict[str, Any]) -> None:
    if not -1.0 <= options["threshold"] <= 1.0:
        raise ConfigError(f"threshold: a cosine similarity is in -1..1, got {options['threshold']}")
    if options["retries"] < 0:
        raise ConfigError(f"retries: must be >= 0, got {options['retries']}")
    if options.get("value") == "":
        raise ConfigError("value: give a non-empty text to compare with")


#: Run providers that send ``OPENAI_API_KEY`` to the run's base URL themselves (the preset's
#: own variable), so ``similar`` on that endpoint may send it too.
_OPENAI_KEY_PROVIDERS = frozenset({"openai", "openai-compatible"})

#: Credential headers, as ``((name, value), ...)``.
_Headers = tuple[tuple[str, str], ...]


def _endpoint(base_url: str | None, api_key_env: str | None) -> tuple[str, str | None, _Headers]:
    """``(endpoint, key, credential headers)``: a key goes only to an endpoint configured for it.

    The check's own ``base_url`` gets its ``api_key_env`` (else ``OPENAI_API_KEY``, as
    ``openai-compatible`` does). The run's endpoint gets the run's own credential: the check's
    ``api_key_env`` if it names one, else the target's ``api_key_env`` or credential headers,
    else ``OPENAI_API_KEY`` only when the run's provider sends that key there itself. Without
    either, ``OPENAI_BASE_URL`` or OpenAI's API, with ``OPENAI_API_KEY``.
    """
    if base_url:
        return base_url, _key(api_key_env), ()
    run = current_endpoint()
    if run is not None and run.base_url:
        if api_key_env is not None:
            return run.base_url, _key(api_key_env), ()
        if run.api_key_env is not None:
            return run.base_url, os.environ.get(run.api_key_env) or None, ()
        if run.credential_headers:
            return run.base_url, None, run.credential_headers
        if run.provider in _OPENAI_KEY_PROVIDERS:
            return run.base_url, _key(None), ()
        return run.base_url, None, ()
    return os.environ.get("OPENAI_BASE_URL") or DEFAULT_EMBEDDING_BASE_URL, _key(api_key_env), ()


def _key(api_key_env: str | None) -> str | None:
    if api_key_env is None:
        return os.environ.get("OPENAI_API_KEY") or None
    key = os.environ.get(api_key_env)
    if not key:
        raise ConfigError(f"similar.api_key_env: the variable {api_key_env} is not set")
    return key


def _client(
    base_url: str, key: str | None, headers: _Headers, retries: int, cache: bool
) -> OpenAIEmbeddings:
    run = current_endpoint()
    path = ((run.store_path if run is not None else None) or MEMORY) if cache else None
    # a client per credential: one endpoint may be asked with two keys in one process
    slot = (base_url, _fingerprint(key, headers), retries, path)
    client = _clients.get(slot)
    if client is None:
        store = EmbeddingCache(path) if path is not None else None
        client = OpenAIEmbeddings(
            base_url,
            key,
            name="embeddings",
            retry=RetryPolicy(max_retries=retries),
            cache=store,
            headers=dict(headers) or None,
        )
        _clients[slot] = client
    return client


def _fingerprint(key: str | None, headers: _Headers) -> str | None:
    """A digest of the credential, so the client table never holds a key as its index."""
    if key is None and not headers:
        return None
    material = "\x00".join([key or "", *(f"{n}\x01{v}" for n, v in headers)])
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


async def _close_clients() -> None:
    """Close every embeddings client's HTTP session (the runner calls this when a run ends)."""
    for client in list(_clients.values()):
        await client.aclose()


def _cosine(a: list[float], b: list[float]) -> float:
    if len(a) != len(b):
        raise ScorerError(f"similar: embeddings of different sizes ({len(a)} and {len(b)})")
    x, y = np.asarray(a), np.asarray(b)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    if norms == 0.0:
        raise ScorerError("similar: an embedding is all zeros; its direction is undefined")
    return float(np.dot(x, y) / norms)


@check(_valid)
async def similar(
    prediction: Any,
    expected: Any = None,
    *,
    value: str | None = None,
    threshold: float = 0.75,
    embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    base_url: str | None = None,
    api_key_env: str | None = None,
    retries: int = 3,
    cache: bool = True,
    negate: bool = False,
) -> Score:
    """Whether the output's embedding has cosine similarity >= ``threshold`` with the
    embedding of ``value`` (default: the expected answer).

    ``base_url`` defaults to the run's ``base_url``, else ``OPENAI_BASE_URL``, else OpenAI's
    API (only with a key: without one, no request is made and the sample's error says what to
    set); the key is read from ``api_key_env`` (default ``OPENAI_API_KEY``, if set: a local
    server needs none), except on the run's endpoint, which gets the run's own credential
    (see :func:`_endpoint`: a key goes only where it was configured to go). A failed request
    is retried ``retries`` times (429, 5xx, timeouts), then it is that sample's error. An empty
    output fails without a request. The similarity is the Score's ``raw``; the embedding tokens
    are in its metadata (not in the run's usage).
    """
    wanted = reference_text(value, expected, "similar")
    text = text_of(prediction)
    if not text.strip():
        return outcome(False, "output is empty: nothing to compare", negate=negate)
    endpoint, key, headers = _endpoint(base_url, api_key_env)
    if endpoint == DEFAULT_EMBEDDING_BASE_URL and key is None:
        raise ScorerError(
            "similar: no embeddings endpoint is named and OPENAI_API_KEY is not set, so OpenAI's "
            "API cannot be asked: give the check a base_url (an OpenAI-compatible server such as "
            "http://127.0.0.1:8000/v1), run it with a provider that has a base_url, or set "
            "OPENAI_BASE_URL or OPENAI_API_KEY"
        )
    client = _client(endpoint, key, headers, retries, cache)
    try:
        answer = await client.embed(embedding_model, [text, wanted])
    except ProviderError as exc:
        raise ScorerError(f"similar: {exc}") from None
    similarity = _cosine(*answer.vectors)
    passed = similarity >= threshold
    says = f"cosine similarity {similarity:.4f} {'>=' if passed else '<'} threshold {threshold:g}"
    result = outcome(passed, says, negate=negate, raw=similarity)
    result.metadata.update(
        {"model": answer.model, "input_tokens": answer.input_tokens, "cached": answer.cached}
    )
    return result


similar.fn.aclose = _close_clients  # type: ignore[attr-defined]
