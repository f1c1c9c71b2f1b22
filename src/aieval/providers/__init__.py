"""Providers: the model endpoints a run or a judge calls.

Presets (``openai``, ``sarmalink``, ``vllm``, ``ollama``, ``openai-compatible``, ``anthropic``)
and your own providers are looked up by name with :func:`get_provider`; :func:`build_provider`
adds retries, adaptive concurrency and the response cache. :class:`OpenAIEmbeddings` asks an
OpenAI-compatible ``/embeddings`` endpoint, with the same retries and an :class:`EmbeddingCache`.
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports

if TYPE_CHECKING:
    from aieval.providers._anthropic import AnthropicProvider
    from aieval.providers._base import ChatRequest, ChatResponse, Provider
    from aieval.providers._build import build_provider
    from aieval.providers._cache import (
        CachedProvider,
        ResponseCache,
        cache_key,
        headers_digest,
        is_deterministic,
    )
    from aieval.providers._credentials import check_env_name, key_from_env
    from aieval.providers._embedding_cache import EmbeddingCache
    from aieval.providers._embeddings import Embeddings, OpenAIEmbeddings
    from aieval.providers._gate import CallGate, current_gate, using_gate
    from aieval.providers._headers import check_headers, sends_headers
    from aieval.providers._limiter import AdaptiveLimiter
    from aieval.providers._openai import OpenAIProvider
    from aieval.providers._params import check_finite, check_params
    from aieval.providers._registry import (
        ENTRY_POINT_GROUP,
        ProviderFactory,
        available_providers,
        get_provider,
        register_provider,
    )
    from aieval.providers._resilient import ResilientProvider
    from aieval.providers._retry import RetryPolicy

__all__ = [
    "ENTRY_POINT_GROUP",
    "AdaptiveLimiter",
    "AnthropicProvider",
    "CachedProvider",
    "CallGate",
    "ChatRequest",
    "ChatResponse",
    "EmbeddingCache",
    "Embeddings",
    "OpenAIEmbeddings",
    "OpenAIProvider",
    "Provider",
    "ProviderFactory",
    "ResilientProvider",
    "ResponseCache",
    "RetryPolicy",
    "available_providers",
    "build_provider",
    "cache_key",
    "check_env_name",
    "check_finite",
    "check_headers",
    "check_params",
    "current_gate",
    "get_provider",
    "headers_digest",
    "is_deterministic",
    "key_from_env",
    "register_provider",
    "sends_headers",
    "using_gate",
]

_EXPORTS = {
    "AnthropicProvider": "aieval.providers._anthropic",
    "ChatRequest": "aieval.providers._base",
    "ChatResponse": "aieval.providers._base",
    "Provider": "aieval.providers._base",
    "build_provider": "aieval.providers._build",
    "CachedProvider": "aieval.providers._cache",
    "CallGate": "aieval.providers._gate",
    "current_gate": "aieval.providers._gate",
    "using_gate": "aieval.providers._gate",
    "ResponseCache": "aieval.providers._cache",
    "cache_key": "aieval.providers._cache",
    "headers_digest": "aieval.providers._cache",
    "is_deterministic": "aieval.providers._cache",
    "check_env_name": "aieval.providers._credentials",
    "key_from_env": "aieval.providers._credentials",
    "EmbeddingCache": "aieval.providers._embedding_cache",
    "Embeddings": "aieval.providers._embeddings",
    "OpenAIEmbeddings": "aieval.providers._embeddings",
    "check_headers": "aieval.providers._headers",
    "sends_headers": "aieval.providers._headers",
    "AdaptiveLimiter": "aieval.providers._limiter",
    "OpenAIProvider": "aieval.providers._openai",
    "check_finite": "aieval.providers._params",
    "check_params": "aieval.providers._params",
    "ENTRY_POINT_GROUP": "aieval.providers._registry",
    "ProviderFactory": "aieval.providers._registry",
    "available_providers": "aieval.providers._registry",
    "get_provider": "aieval.providers._registry",
    "register_provider": "aieval.providers._registry",
    "ResilientProvider": "aieval.providers._resilient",
    "RetryPolicy": "aieval.providers._retry",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
