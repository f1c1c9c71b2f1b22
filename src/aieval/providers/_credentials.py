"""Refusing a credential given twice: URL credentials and another one for the same header."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aieval._secrets import url_credentials, url_without_credentials
from aieval.errors import ConfigError

__all__ = [
    "check_key_and_headers",
    "check_one_credential",
    "check_request_credentials",
    "credential_header",
    "has_authorization",
    "second_credential_message",
]


def has_authorization(headers: Mapping[str, str] | None) -> bool:
    """Whether ``headers`` set ``Authorization`` (in any case)."""
    return credential_header(headers) is not None


def credential_header(
    headers: Mapping[str, str] | None, names: Iterable[str] = ("authorization",)
) -> str | None:
    """The first header of ``headers`` (as given) whose name is one of ``names`` (lower case),
    or ``None``."""
    wanted = set(names)
    for name in headers or {}:
        if isinstance(name, str) and name.lower() in wanted:
            return name
    return None


def check_key_and_headers(
    provider: str,
    key: str | None,
    headers: Mapping[str, str] | None,
    *,
    key_source: str = "api_key=",
    key_sent_as: str = "'Authorization: Bearer ...'",
    names: Iterable[str] = ("authorization",),
) -> None:
    """Refuse an API key together with a credential header (``Authorization``, or each of
    ``names``) of ``headers``, with a :class:`ConfigError` naming both sources and showing no
    secret: one would replace the other, or both would be sent and the server would pick.

    >>> check_key_and_headers("p", "sk-1", {"X-Team": "evals"})  # no credential header: fine
    """
    header = credential_header(headers, names) if key else None
    if header is None:
        return
    raise ConfigError(
        f"provider {provider!r}: an API key ({key_source}, sent as {key_sent_as}) and the "
        f"credential header headers.{header} are both given; one would silently replace the "
        "other (or both would be sent and the server would pick one). Give the credential "
        f"once: drop headers.{header}, or drop {key_source}"
    )


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


def check_request_credentials(
    provider: str,
    request_headers: Mapping[str, str] | None,
    configured: Iterable[str],
    *,
    names: Iterable[str] = ("authorization",),
    field: str = "headers",
) -> None:
    """Refuse a request's own credential header when the provider already sends one.

    ``configured`` names the provider's credentials (``"api_key="``, ``"base_url's
    user:password@"``, ``"headers.Authorization"``): the request's header would silently
    replace them (or both would be sent). A :class:`ConfigError` names both, never a value.

    >>> check_request_credentials("p", {"X-Team": "evals"}, ["api_key="])  # fine
    """
    header = credential_header(request_headers, names)
    sources = list(configured)
    if header is None or not sources:
        return
    raise ConfigError(
        f"{field}.{header}: provider {provider!r} already sends a credential "
        f"({' and '.join(sources)}); this header would silently replace it (or both would be "
        f"sent and the server would pick one). Give the credential once: drop {field}.{header}, "
        "or configure the provider without its own credential"
    )
