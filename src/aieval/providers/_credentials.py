"""Where a key comes from (an argument, a named environment variable), what to say when it is
refused, and refusing a credential given twice (URL credentials and another one for the same
header)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from aieval._secrets import url_credentials, url_without_credentials
from aieval.errors import ConfigError

__all__ = [
    "auth_hint",
    "check_env_name",
    "check_key_and_headers",
    "check_one_credential",
    "check_request_credentials",
    "credential_header",
    "given_key",
    "has_authorization",
    "key_from_env",
    "second_credential_message",
]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_env_name(name: object, field: str = "api_key_env") -> str:
    """``name`` if it can name an environment variable, else a :class:`ConfigError`.

    The value is not shown: a key pasted where its variable's name belongs must not be echoed.

    >>> check_env_name("MY_KEY")
    'MY_KEY'
    """
    if isinstance(name, str) and _ENV_NAME.fullmatch(name):
        return name
    raise ConfigError(
        f"{field} takes the *name* of an environment variable that holds the key (letters, "
        "digits and _, e.g. MY_API_KEY), not the key itself; the value given is not such a name "
        "(it is not shown, in case it is a key)"
    )


def key_from_env(name: str, field: str = "api_key_env", owner: str = "") -> str:
    """The value of the environment variable ``name``; a :class:`ConfigError` naming it (and
    ``field``, ``owner``) when it is unset or empty (an empty variable counts as unset)."""
    check_env_name(name, field)
    value = os.environ.get(name)
    if value:
        return value
    state = "is empty" if value == "" else "is not set"
    where = f"{owner}: " if owner else ""
    raise ConfigError(
        f"{where}{field}: {name} names the environment variable holding the API key, but {name} "
        f"{state} where the evaluation runs; export {name}=<the key> first (or name another "
        f"variable in {field})"
    )


def given_key(
    provider: str, api_key: str | None, api_key_env: str | None
) -> tuple[str | None, str | None]:
    """``(key, where it came from)`` from ``api_key=`` or ``api_key_env=`` (``None, None``
    when neither is given); both together are a :class:`ConfigError`.

    >>> given_key("p", "sk-1", None)
    ('sk-1', 'api_key=')
    """
    if api_key and api_key_env:
        raise ConfigError(
            f"provider {provider!r}: api_key= and api_key_env= are both given; give the key "
            "once (api_key_env, the name of the environment variable holding it, keeps it out "
            "of files)"
        )
    if api_key_env:
        return key_from_env(api_key_env, owner=f"provider {provider!r}"), api_key_env
    if api_key:
        return api_key, "api_key="
    return None, None


def auth_hint(default_env: str | None) -> str:
    """Where a key goes, for a 401/403: ``api_key_env`` (the recommended way, for targets and
    judges alike), else ``default_env`` (the preset's own variable) when there is one."""
    hint = (
        "give the key by naming the environment variable that holds it: api_key_env: MY_KEY "
        "under target: in an eval file or in a judge's options (api_key_env= in run(), "
        "build_provider() and the judges)"
    )
    return f"{hint}, or set {default_env}" if default_env else hint


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
