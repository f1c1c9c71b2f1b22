"""Refusing a credential given twice: URL credentials and another one for the same header."""

from __future__ import annotations

from collections.abc import Mapping

from aieval._secrets import url_credentials, url_without_credentials
from aieval.errors import ConfigError

__all__ = ["check_one_credential", "has_authorization", "second_credential_message"]


def has_authorization(headers: Mapping[str, str] | None) -> bool:
    """Whether ``headers`` set ``Authorization`` (in any case)."""
    return any(isinstance(name, str) and name.lower() == "authorization" for name in headers or {})


def second_credential_message(provider: str, url: str, url_source: str, other: str) -> str:
    """What to say when ``url`` carries ``user:password@`` and ``other`` is given too
    (the URL is shown without its credentials)."""
    return (
        f"provider {provider!r}: {url_source} {url_without_credentials(url)!r} carries "
        "credentials (user:password@, sent as an 'Authorization: Basic ...' header) and "
        f"{other} is given too; both need the one Authorization header. Give the credential "
        f"once: drop the user:password@ from {url_source}, or drop {other}"
    )


def check_one_credential(
    provider: str,
    url: str | None,
    *,
    key: str | None = None,
    key_source: str = "api_key=",
    headers: Mapping[str, str] | None = None,
    url_source: str = "base_url",
) -> None:
    """Refuse URL credentials together with an API key sent as ``Authorization`` (``key``)
    or an ``Authorization`` header of ``headers``, with a :class:`ConfigError` naming both
    sources and showing no secret.

    >>> check_one_credential("p", "http://gw.example/v1", key="sk-1")  # one credential: fine
    """
    if not url or not url_credentials(url):
        return
    if key:
        other = f"an API key ({key_source}, sent as 'Authorization: Bearer ...')"
    elif has_authorization(headers):
        other = "an Authorization header (headers=)"
    else:
        return
    raise ConfigError(second_credential_message(provider, url, url_source, other))
