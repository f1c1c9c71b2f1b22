"""Where a store lives: an SQLite file or a PostgreSQL database, parsed once from its name.

A plain path or ``sqlite:///path`` names an SQLite file; ``postgresql://`` or ``postgres://``
names a PostgreSQL database. Any other ``scheme://`` is refused: it is never taken for a file.
A location shows only its redacted form (the password replaced by ``***``) in messages, logs,
``repr`` and stored configs; the password itself stays in this process, so a redacted URL
parsed again here still connects (other processes use ``PGPASSWORD`` or ``~/.pgpass``).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from aieval.errors import ConfigError

__all__ = ["StoreLocation", "default_location", "parse_location"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_POSTGRES_SCHEMES = ("postgresql", "postgres")
_ACCEPTED = "a file path, sqlite:///path, postgresql://... or postgres://..."
_MASK = "***"
# redacted URL -> the URL with its password, for URLs parsed in this process
_PASSWORDS: dict[str, str] = {}
_PASSWORDS_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """A parsed store location: an SQLite ``path`` or a PostgreSQL URL.

    ``str()`` and ``repr()`` give :attr:`redacted`; the password is never shown.

    Example:
        >>> loc = parse_location("postgresql://ci:hunter2@db.internal:5432/evals")
        >>> (loc.backend, str(loc))
        ('postgres', 'postgresql://ci:***@db.internal:5432/evals')
        >>> parse_location("runs/aieval.db").path
        PosixPath('runs/aieval.db')
    """

    backend: Literal["sqlite", "postgres"]
    #: what every message shows: the path, or the URL with its password replaced by ``***``
    redacted: str
    #: the SQLite file (``None`` for PostgreSQL)
    path: Path | None = None
    _url: str = field(default="", repr=False, compare=False)

    @property
    def is_sqlite(self) -> bool:
        """Whether this is an SQLite file."""
        return self.backend == "sqlite"

    def connect_url(self) -> str:
        """The PostgreSQL URL to connect with (its password included): never print it."""
        return self._url

    def sibling(self, suffix: str) -> Path | None:
        """For SQLite, the file ``<path><suffix>`` beside the store; ``None`` for PostgreSQL."""
        return None if self.path is None else self.path.with_name(self.path.name + suffix)

    def scrub(self, text: str) -> str:
        """``text`` (a driver's error message, say) with this location's password replaced."""
        for secret in _passwords(self._url):
            text = text.replace(secret, _MASK)
        return text

    def __str__(self) -> str:
        return self.redacted

    def __repr__(self) -> str:
        return f"StoreLocation({self.redacted!r})"


def default_location() -> StoreLocation:
    """``$AIEVAL_DB`` if set, else ``./aieval.db``."""
    return parse_location(os.environ.get("AIEVAL_DB") or "aieval.db")


def parse_location(value: str | os.PathLike[str] | StoreLocation) -> StoreLocation:
    """A store location from a path, an ``sqlite:///`` or a ``postgresql://`` URL.

    ``sqlite:///runs.db`` is the relative path ``runs.db``, ``sqlite:////tmp/runs.db`` the
    absolute one (as in SQLAlchemy).

    Raises:
        ConfigError: another scheme (``mysql://``, ``http://``, ...), or a URL naming nothing.
    """
    if isinstance(value, StoreLocation):
        return value
    if isinstance(value, Path) or not isinstance(value, str):
        return _sqlite(Path(value))
    match = _SCHEME.match(value)
    if match is None:
        if not value.strip():
            raise ConfigError(f"store location is empty; give {_ACCEPTED}")
        return _sqlite(Path(value))
    scheme = match.group(1).lower()
    if scheme == "sqlite":
        rest = value[match.end() :]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(
                f"store location {value!r} names no file: write sqlite:///relative.db or"
                " sqlite:////absolute/path.db"
            )
        return _sqlite(Path(rest[1:]))
    if scheme in _POSTGRES_SCHEMES:
        return _postgres(value)
    raise ConfigError(f"store location scheme {scheme!r} is not supported: give {_ACCEPTED}")


def _sqlite(path: Path) -> StoreLocation:
    return StoreLocation("sqlite", str(path), path)


def _postgres(url: str) -> StoreLocation:
    with _PASSWORDS_LOCK:
        known = _PASSWORDS.get(url)
    if known is not None:  # a redacted URL of this process: connect with its password
        return StoreLocation("postgres", url, None, known)
    parts = urlsplit(url)
    if not parts.hostname and not parts.path.strip("/") and not parts.query:
        raise ConfigError(
            f"store location {redact(url)!r} names no database: write"
            " postgresql://user@host:5432/database"
        )
    redacted = redact(url)
    if redacted == url and _MASK in _passwords(url):
        # a redacted URL from another process (a stored spec, a worker): connect without the
        # mask, so libpq takes the password from PGPASSWORD or ~/.pgpass
        return StoreLocation("postgres", url, None, _unmasked(url))
    if redacted != url:
        with _PASSWORDS_LOCK:
            _PASSWORDS[redacted] = url
    return StoreLocation("postgres", redacted, None, url)


def redact(url: str) -> str:
    """``url`` with any password (in the authority or a ``password=`` query) replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        auth, _, host = netloc.rpartition("@")
        if ":" in auth:
            user = auth.split(":", 1)[0]
            netloc = f"{user}:{_MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() == "password" for k, _ in pairs):
            query = urlencode(
                [(k, _MASK if k.lower() == "password" else v) for k, v in pairs],
                safe="*/",
                quote_via=quote,
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _passwords(url: str) -> list[str]:
    if not url:
        return []
    parts = urlsplit(url)
    found = [parts.password or ""]
    found += [
        v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() == "password"
    ]
    return [unquote(p) for p in found if p] + [p for p in found if p]


def _unmasked(url: str) -> str:
    """A redacted URL with its masked password (and ``password=***``) left out."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        auth, _, host = netloc.rpartition("@")
        if auth.endswith(":" + _MASK):
            netloc = f"{auth[: -len(_MASK) - 1]}@{host}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if not (k.lower() == "password" and v == _MASK)]
    query = urlencode(kept, quote_via=quote) if kept != pairs else parts.query
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
