"""Secrets never leave the server: keys that name credentials and known secret values."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from aieval._secrets import REDACTED, is_secret_key

__all__ = ["REDACTED", "Redactor", "is_secret_key"]

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_MIN_SECRET_LEN = 8


class Redactor:
    """Replaces credential-named values and every known secret string in JSON-like data.

    Known secrets are the server token, credential-looking environment variables, and the
    values found under credential keys in request bodies (:meth:`learn`).

    Example:
        >>> r = Redactor(["sk-live-0123456789"], environ={})
        >>> r.redact({"params": {"api_key": "x"}, "error": "bad key sk-live-0123456789"})
        {'params': {'api_key': '[redacted]'}, 'error': 'bad key [redacted]'}
    """

    def __init__(
        self, secrets: Iterable[str | None] = (), *, environ: Mapping[str, str] | None = None
    ) -> None:
        env = os.environ if environ is None else environ
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._add(secrets)
        self._add(value for name, value in env.items() if _SECRET_ENV.search(name))

    def learn(self, data: Any) -> None:
        """Remember every value under a credential key in ``data`` as a secret."""
        self._add(_secret_values(data))

    def redact(self, data: Any) -> Any:
        """A copy of ``data`` without credentials."""
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        return _redact(data, secrets)

    def _add(self, values: Iterable[str | None]) -> None:
        with self._lock:
            self._secrets.update(
                v for v in values if isinstance(v, str) and len(v) >= _MIN_SECRET_LEN
            )


def _secret_values(data: Any) -> Iterable[str]:
    if isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(key, str) and is_secret_key(key):
                yield from _strings(value)
            else:
                yield from _secret_values(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _secret_values(item)


def _strings(data: Any) -> Iterable[str]:
    if isinstance(data, str):
        yield data
        # "Bearer sk-..." also leaks the bare key
        yield from data.split()
    elif isinstance(data, Mapping):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _strings(item)


def _redact(data: Any, secrets: list[str]) -> Any:
    if isinstance(data, str):
        for secret in secrets:
            if secret in data:
                data = data.replace(secret, REDACTED)
        return data
    if isinstance(data, Mapping):
        return {
            key: REDACTED
            if isinstance(key, str) and is_secret_key(key) and value is not None
            else _redact(value, secrets)
            for key, value in data.items()
        }
    if isinstance(data, list | tuple):
        return [_redact(item, secrets) for item in data]
    return data
