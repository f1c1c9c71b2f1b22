"""Credentials are never stored or shown: by the key that names them, and by their value.

Two complementary defences. Mapping keys that name credentials (``api_key``, ``headers``,
``Authorization``...) have their values replaced wherever such a mapping is stored. And every
secret *value* a run was configured with (API keys, custom header values, the ``user:password``
of a URL) is replaced wherever it shows up in text: an error body that echoes a header, a model
answer that repeats its prompt. Long text is redacted first and cut afterwards, so a cut never
leaves the first characters of a key behind.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = [
    "MIN_SECRET_LEN",
    "REDACTED",
    "is_secret_key",
    "redact_data",
    "redact_text",
    "secret_values",
    "secrets_of",
    "shorten",
    "url_credentials",
    "url_without_credentials",
    "without_secrets",
]

REDACTED = "[redacted]"
#: Shorter values are not treated as secrets by value: replacing "abc" everywhere would
#: mangle text without protecting anything worth protecting.
MIN_SECRET_LEN = 6

_SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "authorization",
        "headers",
        "password",
        "secret",
        "token",
        "access_token",
        "refresh_token",
        "client_secret",
        "cookie",
        "x_api_key",
    }
)
_SECRET_SUFFIXES = ("_api_key", "_secret", "_password", "_token", "_apikey")
# Token *counts* are data, not credentials.
_NOT_SECRET = frozenset({"input_tokens", "output_tokens", "total_tokens", "max_tokens"})
# Header values that are protocol, not credentials.
_PLAIN_VALUES = frozenset({"application/json", "text/plain", "text/event-stream", "bearer"})


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a credential (its value is never shown).

    >>> is_secret_key("api_key"), is_secret_key("X-Api-Key"), is_secret_key("input_tokens")
    (True, True, False)
    """
    name = key.lower().replace("-", "_")
    if name in _NOT_SECRET:
        return False
    return name in _SECRET_KEYS or name.endswith(_SECRET_SUFFIXES)


def without_secrets(data: Any) -> Any:
    """A copy of JSON-like ``data`` with the values of credential keys replaced.

    >>> without_secrets({"temperature": 0, "api_key": "sk-1", "headers": {"X": "y"}})
    {'temperature': 0, 'api_key': '[redacted]', 'headers': '[redacted]'}
    """
    if isinstance(data, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and is_secret_key(k) else without_secrets(v)
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [without_secrets(item) for item in data]
    return data


def url_credentials(url: str) -> list[str]:
    """The secrets a URL carries in its ``user:password@`` part.

    Raw and percent-decoded, and as the base64 token of the Basic ``Authorization`` header the
    HTTP client makes of them.

    >>> url_credentials("https://bob:s3cret-pw@gw.example/v1")
    ['bob:s3cret-pw', 's3cret-pw', 'bob', 'Ym9iOnMzY3JldC1wdw==']
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    userinfo, at, _ = parts.netloc.rpartition("@")
    if not at or not userinfo:
        return []
    user, _, password = userinfo.partition(":")
    found = [userinfo, password, user]
    found += [unquote(v) for v in found]
    # the HTTP client sends them as "Authorization: Basic base64(user:password)", which an
    # error body or a model answer can echo back
    found += _basic_auth_tokens(unquote(userinfo)) + _basic_auth_tokens(userinfo)
    return [v for v in dict.fromkeys(found) if v]


def _basic_auth_tokens(userinfo: str) -> list[str]:
    tokens = []
    for encoding in ("utf-8", "latin-1"):
        try:
            tokens.append(base64.b64encode(userinfo.encode(encoding)).decode("ascii"))
        except UnicodeEncodeError:
            continue
    return tokens


def url_without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` replaced, safe to store and show.

    >>> url_without_credentials("http://u:pw@127.0.0.1:8000/v1")
    'http://[redacted]@127.0.0.1:8000/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or not userinfo:
        return url
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))


def secret_values(data: Any) -> set[str]:
    """Every secret value configured in JSON-like ``data``.

    Values under credential keys (and the bare token of ``"Bearer T"``), and the credentials
    of any URL in a string.

    >>> sorted(secret_values({"params": {"api_key": "sk-live-1"}, "url": "http://u:pw12345@h"}))
    ['dTpwdzEyMzQ1', 'pw12345', 'sk-live-1', 'u:pw12345']
    """
    found: set[str] = set()
    _collect(data, found, secret=False)
    return {v for v in found if len(v) >= MIN_SECRET_LEN and v.lower() not in _PLAIN_VALUES}


def _collect(data: Any, found: set[str], *, secret: bool) -> None:
    if isinstance(data, str):
        if secret:
            found.add(data)
            # "Bearer sk-..." also leaks the bare key
            found.update(data.split())
        if "@" in data and "://" in data:
            found.update(url_credentials(data))
    elif isinstance(data, Mapping):
        for key, value in data.items():
            _collect(value, found, secret=secret or (isinstance(key, str) and is_secret_key(key)))
    elif isinstance(data, list | tuple | set | frozenset):
        for item in data:
            _collect(item, found, secret=secret)


def _longest_first(secrets: Iterable[str]) -> list[str]:
    # a dummy key such as "x" or "EMPTY" (local servers) would otherwise turn every "x" in a
    # message into "[redacted]"; such values protect nothing (see MIN_SECRET_LEN)
    return sorted({s for s in secrets if len(s) >= MIN_SECRET_LEN}, key=len, reverse=True)


def redact_text(
    text: str, secrets: Iterable[str], replacements: Mapping[str, str] | None = None
) -> str:
    """``text`` with every secret value replaced (longest first, so no fragment remains).

    ``replacements`` gives some values another stand-in than ``[redacted]``.

    >>> redact_text("bad key sk-live-0123 for u:pw", ["sk-live-0123"])
    'bad key [redacted] for u:pw'
    """
    return _replace_all(text, _longest_first(secrets), replacements)


def _replace_all(text: str, ordered: list[str], replacements: Mapping[str, str] | None) -> str:
    for secret in ordered:
        if secret in text:
            stand_in = replacements.get(secret, REDACTED) if replacements else REDACTED
            text = text.replace(secret, stand_in)
    return text


def redact_data(
    data: Any,
    secrets: Iterable[str],
    *,
    by_key: bool = True,
    replacements: Mapping[str, str] | None = None,
) -> Any:
    """A copy of JSON-like ``data`` with known secret values replaced in every string.

    With ``by_key`` (the default) the values of credential keys are replaced too;
    ``replacements`` as in :func:`redact_text`.

    >>> redact_data({"error": "echo sk-live-0123", "api_key": "x"}, ["sk-live-0123"])
    {'error': 'echo [redacted]', 'api_key': '[redacted]'}
    """
    ordered = _longest_first(secrets)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _replace_all(item, ordered, replacements) if ordered else item
        if isinstance(item, Mapping):
            return {
                key: REDACTED
                if by_key and isinstance(key, str) and is_secret_key(key) and value is not None
                else walk(value)
                for key, value in item.items()
            }
        if isinstance(item, list | tuple):
            return [walk(value) for value in item]
        return item

    return walk(data)


def secrets_of(component: Any) -> frozenset[str]:
    """The secret values a provider (or a wrapper around one, via ``.inner``) declares.

    Providers list their configured credentials in a ``secrets`` attribute; wrappers such as
    the retrying and caching providers hold the real one in ``inner``.
    """
    found: set[str] = set()
    seen = 0
    while component is not None and seen < 16:  # wrappers nest a few deep, never in a cycle
        declared = getattr(component, "secrets", None)
        if isinstance(declared, frozenset | set | tuple | list):
            found.update(v for v in declared if isinstance(v, str) and v)
        component = getattr(component, "inner", None)
        seen += 1
    return frozenset(found)


def shorten(text: str, limit: int, secrets: Iterable[str] = ()) -> str:
    """Redact ``text``, then cut it to at most ``limit`` characters (ending in ``...``).

    Redacting first matters: a key cut in half is no longer found by value.

    >>> shorten("key=sk-live-0123456789 and more", 17, ["sk-live-0123456789"])
    'key=[redacted]...'
    """
    text = redact_text(text, secrets)
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."
