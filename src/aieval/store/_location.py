"""Where a store lives: an SQLite file or a PostgreSQL database, parsed once from its name.

A plain path or ``sqlite:///path`` names an SQLite file; ``postgresql://`` or ``postgres://``
names a PostgreSQL database. Any other ``scheme://`` is refused: it is never taken for a file.
A location shows only its redacted form (the password replaced by ``***``) in messages, logs,
``repr`` and stored configs; the password itself stays in this process, so a redacted URL
parsed again here still connects (other processes use ``PGPASSWORD`` or ``~/.pgpass``).

A URL is checked before anything connects with it: one that libpq could split otherwise than
this module (an ``@``, ``/``, ``?``, ``#`` or space left unencoded in the password, ...) is a
:class:`ConfigError` asking to percent-encode the password, so a password is never taken in
part for a host or a database name and echoed by the driver. The scheme is case-insensitive.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NoReturn
from urllib.parse import (
    SplitResult,
    parse_qsl,
    quote,
    unquote,
    urlencode,
    urlsplit,
)

from aieval._secrets import MIN_SECRET_LEN
from aieval.errors import ConfigError

__all__ = ["StoreLocation", "default_location", "parse_location"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
# "postgresql:/db", "mysql:x": a scheme without "//" (two letters or more: "C:" is a drive)
_SCHEME_ONLY = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")
_POSTGRES_SCHEMES = ("postgresql", "postgres")
_ACCEPTED = "a file path, sqlite:///path, postgresql://... or postgres://..."
_MASK = "***"
# RFC 3986 userinfo: unreserved, sub-delims, ":" and percent-escapes (non-ASCII letters pass too)
_USERINFO_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:%"
)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# libpq options whose value is a secret: shown ***, like the authority's password
_SECRET_KEYS = frozenset(
    {"password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key"}
)
# in a URL refused as malformed, a secret value may hold "&": hidden up to the URL's end
_SECRET_QUERY = re.compile(rf"(?i)((?:^|[?&])(?:{'|'.join(sorted(_SECRET_KEYS))})=).*")
_ENCODE_HINT = (
    "percent-encode the user name and password (@ as %40, : as %3A, / as %2F, ? as %3F,"
    " # as %23, % as %25, a space as %20), or give the password through PGPASSWORD or ~/.pgpass"
)
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

    @property
    def has_password(self) -> bool:
        """Whether the URL carries a password (shown ``***``): another process, given the
        redacted URL, needs it from ``PGPASSWORD`` or ``~/.pgpass``."""
        return self.backend == "postgres" and bool(_passwords(self.redacted))

    def scrub(self, text: str) -> str:
        """``text`` (a driver's error message, say) made safe to show: the full URL becomes its
        redacted form, the password ``***`` (only one long enough not to match ordinary words)
        and tabs spaces."""
        if self._url:
            text = text.replace(self._url, self.redacted)
        for secret in sorted(_passwords(self._url), key=len, reverse=True):
            if len(secret) >= MIN_SECRET_LEN:
                text = text.replace(secret, _MASK)
        return text.replace("\t", " ")

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
        bare = _SCHEME_ONLY.match(value)
        if bare is not None:  # never a file named "postgresql:" (the rest may hold a password)
            raise ConfigError(
                f"store location starting {bare.group(0)!r} looks like a URL without '//': give"
                f" {_ACCEPTED}; for a file whose name holds ':', write ./{bare.group(0)}..."
            )
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
        return _postgres(scheme + value[len(match.group(1)) :])
    raise ConfigError(f"store location scheme {scheme!r} is not supported: give {_ACCEPTED}")


def _sqlite(path: Path) -> StoreLocation:
    return StoreLocation("sqlite", str(path), path)


def _postgres(url: str) -> StoreLocation:
    with _PASSWORDS_LOCK:
        known = _PASSWORDS.get(url)
    if known is not None:  # a redacted URL of this process: connect with its password
        return StoreLocation("postgres", url, None, known)
    parts = _split(url)
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


def _split(url: str) -> SplitResult:
    """``url`` split as libpq splits it too, or a one-line :class:`ConfigError` that shows
    the URL with everything that may be its password replaced by ``***``."""
    rest = url.partition("://")[2]
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, after = rest[:end], rest[end:]
    if any(c.isspace() or not c.isprintable() for c in url):
        _refuse(url, "it holds a space or a control character")
    if authority.count("@") > 1:
        _refuse(url, "more than one '@' comes before the host")
    if "@" in after:
        _refuse(url, "an '@' comes after a '/', '?' or '#' (one in the user name or password?)")
    if "#" in rest:
        _refuse(url, "it holds a '#'")
    userinfo, _, host = authority.rpartition("@")
    if any(c not in _USERINFO_CHARS and c.isascii() for c in userinfo):
        _refuse(url, "the user name or password holds a character that URLs reserve")
    if _BAD_PERCENT.search(rest):
        _refuse(url, "a '%' is not followed by two hex digits")
    _check_query(url, after.partition("?")[2])
    if "[" in host or "]" in host:
        for part in host.split(","):  # libpq takes host1:5432,host2:5433
            if ("[" in part or "]" in part) and not re.fullmatch(r"\[[^\[\]]+\](:\d*)?", part):
                raise ConfigError(
                    f"store location {_masked(url)!r} is not a valid URL: its host {part!r} is"
                    " not a bracketed IPv6 address (write [::1] or [::1]:5432)"
                )
    try:
        parts = urlsplit(url)
        _ = parts.hostname, parts.password
    except ValueError:  # its message may quote the password: not shown
        raise ConfigError(
            f"store location {_masked(url)!r} is not a valid URL; {_ENCODE_HINT}"
        ) from None
    return parts


def _check_query(url: str, query: str) -> None:
    """Each parameter is ``key=value`` with a libpq option as key: otherwise libpq's error
    would quote a key that can be a piece of a password holding ``&`` or ``=``."""
    if not query:
        return
    options = _libpq_options()
    for param in query.split("&"):
        key, eq, value = param.partition("=")
        if not key or not eq or "=" in value:
            _refuse(url, "a query parameter is not key=value (an '&' or '=' in a password?)")
        if options is not None and unquote(key) not in options:
            if any(unquote(k).lower() in _SECRET_KEYS for k in _keys(query)):
                _refuse(url, "a query parameter is not a libpq option (an '&' in a password?)")
            raise ConfigError(
                f"store location {_masked(url)!r} is not valid: {unquote(key)!r} is not a"
                " libpq connection option (sslmode, connect_timeout, application_name, ...)"
            )


def _keys(query: str) -> list[str]:
    return [param.partition("=")[0] for param in query.split("&")]


@functools.cache
def _libpq_options() -> frozenset[str] | None:
    """The option names libpq knows (``ssl`` too: ``ssl=true`` means ``sslmode=require``);
    ``None`` without psycopg (opening the store then says to install it)."""
    try:
        from psycopg import pq
    except ImportError:
        return None
    return frozenset({"ssl", *(o.keyword.decode() for o in pq.Conninfo.get_defaults())})


def _refuse(url: str, problem: str) -> NoReturn:
    raise ConfigError(f"store location {_masked(url)!r} is ambiguous: {problem}; {_ENCODE_HINT}")


def _masked(url: str) -> str:
    """``url``, which may be malformed, with all that could be its password replaced: the
    userinfo after the first ``:`` up to the last ``@``, and all after a ``password=``."""
    head, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if at:
        user, colon, _ = userinfo.partition(":")
        rest = f"{user}:{_MASK}@{host}" if colon else rest
    return head + sep + _SECRET_QUERY.sub(lambda m: m.group(1) + _MASK, rest)


def redact(url: str) -> str:
    """``url`` with any password (in the authority or a ``password=`` query, or another
    secret option such as ``sslpassword=``) replaced."""
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
        if any(k.lower() in _SECRET_KEYS for k, _ in pairs):
            query = urlencode(
                [(k, _MASK if k.lower() in _SECRET_KEYS else v) for k, v in pairs],
                safe="*/",
                quote_via=quote,
            )
    return _join(parts, netloc, query)


def _join(parts: SplitResult, netloc: str, query: str) -> str:
    """The URL again, always with ``//`` (``urlunsplit`` drops it from a URL without a host:
    ``postgresql:///db?host=...`` would come back as ``postgresql:/db?host=...``)."""
    url = f"{parts.scheme}://{netloc}{parts.path}"
    return url + (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")


def _passwords(url: str) -> list[str]:
    if not url:
        return []
    parts = urlsplit(url)
    found = [parts.password or ""]
    found += [
        v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() in _SECRET_KEYS
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
    kept = [(k, v) for k, v in pairs if not (k.lower() in _SECRET_KEYS and v == _MASK)]
    query = urlencode(kept, quote_via=quote) if kept != pairs else parts.query
    return _join(parts, netloc, query)
