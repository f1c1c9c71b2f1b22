"""Checking request parameters before they become fields of a JSON request body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aieval.errors import ConfigError

__all__ = ["check_params"]

# Names under which a key can only be meant as the credential: no chat-completions or Messages
# API reads any of them from the body. Compared lower-case, with "-" read as "_".
_CREDENTIAL_NAMES = frozenset({"api_key", "apikey", "x_api_key", "authorization"})


def check_params(params: Mapping[str, Any], field: str = "params") -> None:
    """Refuse a credential among request parameters with a :class:`ConfigError` naming it.

    Request parameters are sent as fields of the JSON body. A key there does not authenticate
    (the API reads it from a header), and it would travel in every request body instead.

    >>> check_params({"temperature": 0, "top_p": 0.5, "headers": {"X-Team": "evals"}})
    """
    for name in params:
        if isinstance(name, str) and name.lower().replace("-", "_") in _CREDENTIAL_NAMES:
            raise ConfigError(
                f"{field}.{name}: request parameters are sent inside the JSON request body, "
                "where an API key does not authenticate; give the key as the provider's "
                "credential instead: the preset's environment variable (OPENAI_API_KEY, "
                "VLLM_API_KEY, ANTHROPIC_API_KEY, ...), an Authorization header in the "
                "target's headers (eval files and the server: headers: {Authorization: "
                "'Bearer ...'}), or api_key= on the provider in Python "
                "(build_provider(name, api_key=...), OpenAIProvider(url, api_key=...))"
            )
