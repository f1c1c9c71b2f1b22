"""Built-in provider presets: named OpenAI-compatible endpoints and Anthropic."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from aieval._secrets import url_credentials
from aieval.errors import ConfigError, ProviderAuthError
from aieval.providers._anthropic import AnthropicProvider
from aieval.providers._base import Provider
from aieval.providers._credentials import (
    auth_hint,
    check_key_and_headers,
    check_one_credential,
    given_key,
    has_authorization,
)
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
    key_source: str,
    url_env: str,
) -> None:
    """Refuse a credential given twice, naming where each came from (argument or variable)."""
    check_one_credential(
        provider,
        url,
        key=key,
        key_source=key_source,
        headers=headers,
        url_source="base_url" if base_url else url_env,
    )
    check_key_and_headers(provider, key, headers, key_source=key_source)


def _key(
    provider: str, api_key: str | None, api_key_env: str | None, env: str | None
) -> tuple[str | None, str]:
    """``(key, where it came from)``: ``api_key=``, else the variable ``api_key_env`` names,
    else the preset's own variable ``env``."""
    key, source = given_key(provider, api_key, api_key_env)
    if key is not None and source is not None:
        return key, source
    return (_env(env), env) if env else (None, "api_key=")


def _require_key(provider: str, key: str | None, env: str) -> str:
    if key:
        return key
    raise ProviderAuthError(f"provider {provider!r} needs an API key: {auth_hint(env)}")


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """A named OpenAI-compatible endpoint whose URL and key come from its own variables.

    ``default_url`` None: the URL is required; ``key_env`` None: the preset reads no key
    variable (a key may still be given); ``key_required``: a key must be found.
    """

    name: str
    url_env: str
    default_url: str | None
    key_env: str | None
    key_required: bool
    hint_more: str = ""

    def __call__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
    ) -> Provider:
        url = base_url or _env(self.url_env) or self.default_url
        if not url:
            raise ConfigError(
                f"provider {self.name!r} needs its endpoint: set {self.url_env} or pass base_url="
            )
        key, source = _key(self.name, api_key, api_key_env, self.key_env)
        if self.key_required and self.key_env is not None:
            key = _require_key(self.name, key, self.key_env)
        _check_sources(self.name, url, key, headers, base_url=base_url, key_source=source,
                       url_env=self.url_env)  # fmt: skip
        hint = auth_hint(self.key_env) + self.hint_more if self.key_env else None
        return OpenAIProvider(
            url, key, name=self.name, timeout=timeout, headers=headers, auth_hint=hint,
            key_source=source,
        )  # fmt: skip


#: OpenAI: ``OPENAI_API_KEY`` (required), ``OPENAI_BASE_URL`` (default the public API).
openai_preset = _Endpoint(
    "openai", "OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY", True
)
#: SarmaLink: ``SARMALINK_BASE_URL`` and ``SARMALINK_API_KEY``, both required.
sarmalink_preset = _Endpoint("sarmalink", "SARMALINK_BASE_URL", None, "SARMALINK_API_KEY", True)
#: vLLM: ``VLLM_BASE_URL`` (default ``http://localhost:8000/v1``), optional ``VLLM_API_KEY``.
vllm_preset = _Endpoint(
    "vllm", "VLLM_BASE_URL", "http://localhost:8000/v1", "VLLM_API_KEY", False,
    " (the server's --api-key)",
)  # fmt: skip
#: Ollama: ``OLLAMA_BASE_URL`` (default ``http://localhost:11434/v1``); no key needed (Ollama
#: ignores one, but a gateway in front of it may check it).
ollama_preset = _Endpoint("ollama", "OLLAMA_BASE_URL", "http://localhost:11434/v1", None, False)


def openai_compatible_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
    name: str = "openai-compatible",
    supports_json_schema: bool = True,
) -> Provider:
    """Any OpenAI-compatible endpoint; ``base_url`` is required, the key is optional.

    The key is ``api_key=``, else the variable ``api_key_env`` names, else ``OPENAI_API_KEY``
    when no other credential is given (an ``Authorization`` header, ``user:password@`` in
    ``base_url``): that fallback yields to a request's own ``Authorization`` header.
    """
    if not base_url:
        raise ConfigError(
            "provider 'openai-compatible' needs base_url= (e.g. http://localhost:8080/v1)"
        )
    key, source = given_key(name, api_key, api_key_env)
    fallback = False
    if key is None and not has_authorization(headers) and not url_credentials(base_url):
        key, source, fallback = _env("OPENAI_API_KEY"), "OPENAI_API_KEY", True
    return OpenAIProvider(
        base_url, key, name=name, timeout=timeout, headers=headers,
        supports_json_schema=supports_json_schema, auth_hint=auth_hint("OPENAI_API_KEY"),
        key_source=source, key_is_fallback=fallback,
    )  # fmt: skip


def anthropic_preset(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    timeout: float = 60.0,
    headers: Mapping[str, str] | None = None,
) -> Provider:
    """Anthropic: ``ANTHROPIC_API_KEY`` (required), optional ``ANTHROPIC_BASE_URL``."""
    key, source = given_key("anthropic", api_key, api_key_env)
    return AnthropicProvider(
        key, base_url=base_url, timeout=timeout, headers=headers, key_source=source
    )


PRESETS: dict[str, Callable[..., Provider]] = {
    "anthropic": anthropic_preset,
    "ollama": ollama_preset,
    "openai": openai_preset,
    "openai-compatible": openai_compatible_preset,
    "sarmalink": sarmalink_preset,
    "vllm": vllm_preset,
}
