"""Built-in provider presets: named OpenAI-compatible endpoints and Anthropic."""

from __future__ import annotations

import os
from collections.abc import Mapping

from aieval.errors import ConfigError, ProviderAuthError
from aieval.providers._anthropic import AnthropicProvider
from aieval.providers._base import Provider
from aieval.providers._credentials import check_key_and_headers, check_one_credential
from aieval.providers._openai import OpenAIProvider

__all__ = ["PRESETS"]


def _env(name: str) -> str | None:
    return os.environ.get(name) or None  # an empty variable counts as unset


def _check_sources(
    provider: str,
    url: str,
    key: str | None,
    headers: Mapping[str, str] | None,
    *,
    base_url: str | None,
    api_key: str | None,
    url_env: str,
    key_env: str | None,
) -> None:
    """Refuse a credential given twice, naming where each came from (argument or variable)."""
    key_source = "api_key=" if api_key or key_env is None else key_env
    check_one_credential(
        provider,
        url,
        key=key,
        key_source=key_source,
        headers=headers,
        url_source="base_url" if base_url else url_env,
    )
    check_key_and_headers(provider, key, headers, key_source=key_source)


def _require_key(provider: str, api_key: str | None, env: str) -> str:
    if api_key:
        return api_key
    raise ProviderAuthError(f"provider {provider!r} needs an API key: set {env} or pass api_key=")


def openai_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """OpenAI: ``OPENAI_API_KEY`` (required), ``OPENAI_BASE_URL`` (default the public API)."""
    key = _require_key("openai", api_key or _env("OPENAI_API_KEY"), "OPENAI_API_KEY")
    url = base_url or _env("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    _check_sources("openai", url, key, headers, base_url=base_url, api_key=api_key,
                   url_env="OPENAI_BASE_URL", key_env="OPENAI_API_KEY")  # fmt: skip
    return OpenAIProvider(
        url, key, name="openai", timeout=timeout, headers=headers,
        auth_hint="set OPENAI_API_KEY or pass api_key=",
    )  # fmt: skip


def sarmalink_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """SarmaLink: ``SARMALINK_BASE_URL`` and ``SARMALINK_API_KEY``, both required."""
    url = base_url or _env("SARMALINK_BASE_URL")
    if not url:
        raise ConfigError(
            "provider 'sarmalink' needs its endpoint: set SARMALINK_BASE_URL or pass base_url="
        )
    key = _require_key("sarmalink", api_key or _env("SARMALINK_API_KEY"), "SARMALINK_API_KEY")
    _check_sources("sarmalink", url, key, headers, base_url=base_url, api_key=api_key,
                   url_env="SARMALINK_BASE_URL", key_env="SARMALINK_API_KEY")  # fmt: skip
    return OpenAIProvider(
        url, key, name="sarmalink", timeout=timeout, headers=headers,
        auth_hint="set SARMALINK_API_KEY or pass api_key=",
    )  # fmt: skip


def vllm_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """vLLM: ``VLLM_BASE_URL`` (default ``http://localhost:8000/v1``), optional ``VLLM_API_KEY``."""
    url = base_url or _env("VLLM_BASE_URL") or "http://localhost:8000/v1"
    key = api_key or _env("VLLM_API_KEY")
    _check_sources("vllm", url, key, headers, base_url=base_url, api_key=api_key,
                   url_env="VLLM_BASE_URL", key_env="VLLM_API_KEY")  # fmt: skip
    return OpenAIProvider(
        url, key, name="vllm", timeout=timeout, headers=headers,
        auth_hint="set VLLM_API_KEY to the server's --api-key",
    )  # fmt: skip


def ollama_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """Ollama: ``OLLAMA_BASE_URL`` (default ``http://localhost:11434/v1``); no key needed."""
    url = base_url or _env("OLLAMA_BASE_URL") or "http://localhost:11434/v1"
    _check_sources("ollama", url, api_key, headers, base_url=base_url, api_key=api_key,
                   url_env="OLLAMA_BASE_URL", key_env=None)  # fmt: skip
    # Ollama ignores the key, but gateways in front of it may check one.
    return OpenAIProvider(url, api_key, name="ollama", timeout=timeout, headers=headers)


def openai_compatible_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
    name: str = "openai-compatible",
    supports_json_schema: bool = True,
) -> Provider:
    """Any OpenAI-compatible endpoint; ``base_url`` is required, the key is optional."""
    if not base_url:
        raise ConfigError(
            "provider 'openai-compatible' needs base_url= (e.g. http://localhost:8080/v1)"
        )
    return OpenAIProvider(
        base_url, api_key, name=name, timeout=timeout, headers=headers,
        supports_json_schema=supports_json_schema,
    )  # fmt: skip


def anthropic_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """Anthropic: ``ANTHROPIC_API_KEY`` (required), optional ``ANTHROPIC_BASE_URL``."""
    return AnthropicProvider(api_key, base_url=base_url, timeout=timeout, headers=headers)


PRESETS = {
    "anthropic": anthropic_preset,
    "ollama": ollama_preset,
    "openai": openai_preset,
    "openai-compatible": openai_compatible_preset,
    "sarmalink": sarmalink_preset,
    "vllm": vllm_preset,
}
