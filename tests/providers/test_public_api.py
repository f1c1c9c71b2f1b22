"""The exported names of aieval.providers, and the examples in its docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

import aieval.providers as providers

MODULES = [
    "_cache",
    "_embeddings",
    "_http",
    "_limiter",
    "_openai",
    "_params",
    "_registry",
    "_retry",
]


def test_exports_are_pinned() -> None:
    # Order is ruff's (RUF022: constants, classes, functions), checked by the linter.
    assert set(providers.__all__) == {
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
    }
    for name in providers.__all__:
        assert hasattr(providers, name), name


@pytest.mark.parametrize("module", [pytest.param(m, id=m) for m in MODULES])
def test_docstring_examples_run(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = importlib.import_module("aieval.providers._registry")
    monkeypatch.setattr(registry, "_registry", dict(registry._registry))
    result = doctest.testmod(importlib.import_module(f"aieval.providers.{module}"))
    assert result.failed == 0
    assert result.attempted > 0


def test_build_provider_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    result = doctest.testmod(importlib.import_module("aieval.providers._build"))
    assert (result.failed, result.attempted) == (0, 2)
