"""Providers: the model endpoints a run or a judge calls.

Presets (``openai``, ``sarmalink``, ``vllm``, ``ollama``, ``openai-compatible``, ``anthropic``)
and your own providers are looked up by name with :func:`get_provider`; :func:`build_provider`
adds retries, adaptive concurrency and the response cache. :class:`OpenAIEmbeddings` asks an
OpenAI-compatible ``/embeddings`` endpoint, with the same retries and an :class:`EmbeddingCache`.
"""

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
from aieval.providers._embedding_cache import EmbeddingCache
from aieval.providers._embeddings import Embeddings, OpenAIEmbeddings
from aieval.providers._limiter import AdaptiveLimiter
from aieval.providers._openai import OpenAIProvider
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
    "get_provider",
    "headers_digest",
    "is_deterministic",
    "register_provider",
]
