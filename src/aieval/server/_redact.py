"""Secrets and server paths never leave the server: redaction of everything it sends or logs."""

from __future__ import annotations

import logging
import os
import re
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aieval._secrets import MIN_SECRET_LEN, REDACTED, is_secret_key, redact_data, secret_values

__all__ = ["REDACTED", "Redactor", "is_secret_key", "redact_logs"]

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
# Environment values this short are flags ("1", "true"), not credentials.
_MIN_ENV_SECRET_LEN = 8


class Redactor:
    """Replaces credential-named values, every known secret string, and the roots' paths.

    Known secrets are the server token, credential-looking environment variables, and the
    values found under credential keys (and in URLs' ``user:password@``) of request bodies
    (:meth:`learn`). The absolute paths of the dataset ``roots`` are cut from every string,
    so a message names ``data/qa.jsonl``, never where the server keeps it.

    Example:
        >>> r = Redactor(["sk-live-0123456789"], environ={})
        >>> r.redact({"params": {"api_key": "x"}, "error": "bad key sk-live-0123456789"})
        {'params': {'api_key': '[redacted]'}, 'error': 'bad key [redacted]'}
    """

    def __init__(
        self,
        secrets: Iterable[str | None] = (),
        *,
        environ: Mapping[str, str] | None = None,
        roots: Sequence[Path] = (),
    ) -> None:
        env = os.environ if environ is None else environ
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._add(secrets)
        self._add(
            value
            for name, value in env.items()
            if _SECRET_ENV.search(name) and len(value) >= _MIN_ENV_SECRET_LEN
        )
        self._prefixes = _root_prefixes(roots)

    def learn(self, data: Any) -> None:
        """Remember every secret value configured in ``data`` (see ``secret_values``)."""
        self._add(secret_values(data))

    def redact(self, data: Any) -> Any:
        """A copy of ``data`` without credentials or the server's root paths."""
        with self._lock:
            secrets = list(self._secrets)
        return redact_data(data, [*secrets, *self._prefixes], replacements=self._prefixes)

    def text(self, message: str) -> str:
        """``message`` redacted, for logs."""
        redacted: str = self.redact(message)
        return redacted

    def _add(self, values: Iterable[str | None]) -> None:
        with self._lock:
            self._secrets.update(
                v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LEN
            )


def _root_prefixes(roots: Sequence[Path]) -> dict[str, str]:
    """``{"/srv/data/": ""}`` for each root, as given and resolved."""
    prefixes: dict[str, str] = {}
    for root in roots:
        for form in {str(root), str(root.resolve())}:
            if form.rstrip(os.sep):
                prefixes[form.rstrip(os.sep) + os.sep] = ""
    return prefixes


class _LogFilter(logging.Filter):
    """Redacts every record of the aieval loggers with each live server's redactor."""

    def __init__(self) -> None:
        super().__init__()
        self.redactors: weakref.WeakSet[Redactor] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        redactors = list(self.redactors)
        if not redactors:
            return True
        message = record.getMessage()
        if record.exc_info:
            # tracebacks quote exception messages: format them now, redacted
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        for redactor in redactors:
            message = redactor.text(message)
            if record.exc_text:
                record.exc_text = redactor.text(record.exc_text)
        record.msg, record.args = message, ()
        return True


_LOG_FILTER = _LogFilter()
_LOGGERS = ("aieval", "aieval.server", "aieval.providers", "uvicorn.error")


def redact_logs(redactor: Redactor) -> None:
    """Redact what the aieval (and uvicorn error) loggers write, while ``redactor`` lives."""
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)
    _LOG_FILTER.redactors.add(redactor)
