"""Turning HTTP failures into :mod:`aieval.errors` exceptions, without leaking API keys."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from aieval._secrets import MIN_SECRET_LEN, redact_text, shorten
from aieval.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderHTTPError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

__all__ = ["error_for_status", "error_message", "parse_retry_after", "redact"]

_MAX_MESSAGE = 500
_REDACTED = "***"


def redact(text: str, secret: str | Iterable[str] | None) -> str:
    """Replace every occurrence of ``secret`` (or of each of several secrets) in ``text``.

    >>> redact("bad key sk-123", "sk-123")
    'bad key ***'
    """
    if not secret:
        return text
    if isinstance(secret, str):
        return text.replace(secret, _REDACTED) if len(secret) >= MIN_SECRET_LEN else text
    return redact_text(text, secret).replace("[redacted]", _REDACTED)


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date.

    Header names are matched case-insensitively; an unparseable or negative value gives ``None``.

    >>> parse_retry_after({"Retry-After": "2"})
    2.0
    >>> parse_retry_after({"retry-after-ms": "250"})
    0.25
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _as_seconds(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _as_seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _as_seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    # float() accepts "nan" and "inf"; neither is a wait a server can mean.
    if seconds != seconds or seconds in (float("inf"), float("-inf")) or seconds < 0:
        return None
    return seconds


def error_message(body: bytes | str, secrets: Iterable[str] = ()) -> str:
    """The server's own explanation from an error body (OpenAI, Anthropic or plain text).

    ``secrets`` are replaced before the message is cut to its maximum length, so a cut never
    leaves part of a key.

    >>> error_message(b'{"error": {"message": "model not found"}}')
    'model not found'
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    secrets = tuple(secrets)
    try:
        data: Any = json.loads(text)
    except ValueError:
        return _shorten(text.strip(), secrets)
    for candidate in _message_candidates(data):
        if isinstance(candidate, str) and candidate.strip():
            return _shorten(candidate.strip(), secrets)
    return _shorten(text.strip(), secrets)


def _message_candidates(data: Any) -> list[Any]:
    if not isinstance(data, dict):
        return []
    error = data.get("error")
    nested = error.get("message") if isinstance(error, dict) else error
    return [nested, data.get("message"), data.get("detail")]


def _shorten(text: str, secrets: Iterable[str]) -> str:
    return shorten(redact(text, secrets), _MAX_MESSAGE)


def error_for_status(
    provider: str,
    status: int,
    message: str,
    headers: Mapping[str, str],
    *,
    api_key: str | None = None,
    secrets: Iterable[str] = (),
    auth_hint: str | None = None,
) -> ProviderError:
    """The :class:`ProviderError` subclass for an HTTP error status, with a redacted message.

    ``api_key`` and every value in ``secrets`` (header values, URL credentials) are replaced.
    """
    text = f"{provider}: HTTP {status}"
    if message:
        text += f": {message}"
    text = redact(redact(text, api_key), secrets)
    if status == 429:
        return RateLimitError(text, status=status, retry_after=parse_retry_after(headers))
    if status >= 500:
        return ProviderServerError(text, status=status)
    if status in (401, 403):
        hint = auth_hint or "check the API key"
        return ProviderAuthError(f"{text} ({hint})", status=status)
    if status == 408:
        # A request timeout is a transient condition (the OpenAI SDK retries it too).
        return ProviderTimeoutError(text, status=status)
    return ProviderHTTPError(text, status=status)
