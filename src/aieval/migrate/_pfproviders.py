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


def map_provider(
    ref: ProviderRef, *, allow_endpoints: bool = False
) -> MappedProvider | UnmappedProvider:
    """The aieval target of ``ref``, or why there is none.

    Where requests go and which key they carry are the eval author's: a provider that sets
    ``apiBaseUrl`` or ``apiKeyEnvar`` maps only with ``allow_endpoints`` (the author read them
    and passed ``--allow-endpoints``), else it is reported as not mapped, naming both."""
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
    if endpoint and not allow_endpoints:
        chosen = ", ".join(f"{key} {ref.config[key]!r}" for key in _ENDPOINT if key in ref.config)
        return UnmappedProvider(
            ref,
            f"it sets where requests go and with which key ({chosen}); an imported "
            "configuration does not choose them: check them and pass --allow-endpoints "
            "(allow_endpoints=True), or set them in the eval file yourself",
        )
    return MappedProvider(ref, provider, model, params=params, **endpoint)
