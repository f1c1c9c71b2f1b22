"""promptfoo provider ids to aieval targets (provider, model, request parameters)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aieval.migrate._pfconfig import ProviderRef

__all__ = ["MappedProvider", "UnmappedProvider", "map_provider"]


@dataclass(frozen=True, slots=True)
class MappedProvider:
    """An aieval target for one promptfoo provider."""

    source: ProviderRef
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def group(self) -> tuple[str, str | None, str | None, str]:
        """Providers with the same group differ only in the model: one eval file's models."""
        return (self.provider, self.base_url, self.api_key_env, repr(sorted(self.params.items())))


@dataclass(frozen=True, slots=True)
class UnmappedProvider:
    """A provider aieval has no target for, and why."""

    source: ProviderRef
    reason: str


#: promptfoo provider prefix -> (aieval provider, the id's kinds of chat model)
_PREFIXES = {
    "openai": ("openai", {"chat", "responses"}),
    "anthropic": ("anthropic", {"messages"}),
    "ollama": ("ollama", {"chat"}),
    "vllm": ("vllm", {"chat"}),
}
#: request settings promptfoo and aieval name alike (OpenAI's names)
_PARAMS = {
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
_ENDPOINT = {"apiBaseUrl": "base_url", "apiKeyEnvar": "api_key_env"}


def map_provider(ref: ProviderRef) -> MappedProvider | UnmappedProvider:
    """The aieval target of ``ref``, or why there is none."""
    if ref.extra:
        return UnmappedProvider(ref, f"keys {sorted(ref.extra)} are not translated")
    parts = ref.id.split(":")
    prefix = parts[0]
    if prefix not in _PREFIXES:
        kind = "code" if ref.id.startswith(("file://", "python:", "exec:")) else "provider"
        return UnmappedProvider(
            ref,
            f"{ref.id!r} is a {kind} aieval has no target for; evaluate recorded answers "
            "(a prediction per row) or a Python callable instead",
        )
    provider, chat_kinds = _PREFIXES[prefix]
    if len(parts) == 3 and parts[1] in chat_kinds:
        model = parts[2]
    elif len(parts) == 2 and parts[1] not in {"completion", "embedding", "embeddings"}:
        model = parts[1]
    else:
        return UnmappedProvider(ref, f"{ref.id!r} is not a chat model")
    if not model:
        return UnmappedProvider(ref, f"{ref.id!r} names no model")
    params: dict[str, Any] = {}
    endpoint: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in ref.config.items():
        if key in _PARAMS:
            params[_PARAMS[key]] = value
        elif key in _ENDPOINT:
            endpoint[_ENDPOINT[key]] = value
        else:
            unknown.append(key)
    if unknown:
        return UnmappedProvider(ref, f"config keys {sorted(unknown)} are not translated")
    return MappedProvider(ref, provider, model, params=params, **endpoint)
