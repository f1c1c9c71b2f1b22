"""Checking request parameters before they become fields of a JSON request body."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from aieval.errors import ConfigError
from aieval.providers._base import ChatRequest

__all__ = ["check_finite", "check_params", "check_request"]

# Names under which a key can only be meant as the credential: no chat-completions or Messages
# API reads any of them from the body. Compared lower-case, with "-" read as "_".
_CREDENTIAL_NAMES = frozenset({"api_key", "apikey", "x_api_key", "authorization"})


def check_params(params: Mapping[str, Any], field: str = "params") -> None:
    """Refuse a credential, or a NaN or infinite number, among request parameters with a
    :class:`ConfigError` naming it (``params.api_key``, ``params.temperature``).

    Request parameters are sent as fields of the JSON body. A key there does not authenticate
    (the API reads it from a header), and it would travel in every request body instead. JSON
    has no NaN or Infinity (see :func:`check_finite`).

    >>> check_params({"temperature": 0, "top_p": 0.5, "headers": {"X-Team": "evals"}})
    """
    for name, value in params.items():
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
        check_finite(value, f"{field}.{name}")


def check_finite(value: Any, field: str) -> None:
    """Refuse a NaN or infinite number anywhere in ``value`` (nested mappings and lists
    included) with a :class:`ConfigError` naming where (``params.logit_bias.50256``).

    JSON has no NaN or Infinity: sent as the bare word ``NaN`` the body is not JSON (a lenient
    server may take it, a strict one refuses it), and the Anthropic SDK cannot encode it.

    >>> check_finite({"top_p": 0.5, "stop": ["a"]}, "params")
    """
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        if not math.isfinite(value):
            raise ConfigError(
                f"{field}: {value!r} is not a finite number; JSON has no NaN or Infinity, "
                "so no request can carry it"
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_finite(item, f"{field}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_finite(item, f"{field}[{index}]")


def check_request(request: ChatRequest) -> None:
    """:func:`check_params` on the request's params, and :func:`check_finite` on its
    temperature, max_tokens, response schema and messages; a :class:`ConfigError` names the
    field."""
    check_params(request.params)
    check_finite(request.temperature, "temperature")
    check_finite(request.max_tokens, "max_tokens")
    check_finite(request.response_schema, "response_schema")
    check_finite(request.messages, "messages")
