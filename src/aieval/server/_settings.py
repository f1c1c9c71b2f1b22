"""Server settings: where it listens, who may call it, what it may read."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from aieval.errors import ConfigError

__all__ = ["LOOPBACK_HOSTS", "ServerSettings", "is_loopback"]

#: Host names that always reach only this machine.
LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
#: An upload token's name: recorded on the runs it creates, and part of its spool folder.
_TOKEN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback name or address (``localhost``, ``127.x``, ``::1``).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """How the evaluation server runs.

    Attributes:
        host: the address it binds (also an allowed ``Host`` header).
        port: the port it binds.
        token: the bearer token every request must carry; required off loopback.
        upload_tokens: more bearer tokens, by name, that may only upload runs (``aieval push``):
            each may add samples only to the runs it created, which record its name. Needs
            ``token``.
        review_tokens: bearer tokens, by reviewer name, with the ``review`` right: each reaches
            only the viewer's page and the review queue's endpoints, and labels as its name.
            The review endpoints answer 403 to every other token. Needs ``token``.
        unsafe_no_auth: allow a non-loopback bind without a token (anyone who can reach the
            port can start evaluations and read every result).
        allowed_hosts: extra ``Host`` header values to accept (a LAN name, a proxy's name).
        dataset_roots: folders that dataset, workflow and import paths must stay inside.
        max_concurrent_runs: evaluations running at once; more wait in a queue.
        allow_imports: let eval bodies import Python scorer files (runs their code).
        keepalive_s: seconds between keep-alive comments on event streams.
        online_scoring: score the store's online rules in this server (``False``: it serves
            the API and the viewer only; another server sharing the store scores them).
    """

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    upload_tokens: Mapping[str, str] = field(default_factory=dict)
    review_tokens: Mapping[str, str] = field(default_factory=dict)
    unsafe_no_auth: bool = False
    allowed_hosts: tuple[str, ...] = ()
    dataset_roots: tuple[Path, ...] = field(default_factory=lambda: (Path.cwd(),))
    max_concurrent_runs: int = 4
    allow_imports: bool = False
    keepalive_s: float = 15.0
    online_scoring: bool = True

    def check(self) -> None:
        """Refuse settings that would expose the server without authentication."""
        if self.max_concurrent_runs < 1:
            raise ConfigError(f"max_concurrent_runs must be >= 1, got {self.max_concurrent_runs}")
        if self.keepalive_s <= 0:
            raise ConfigError(f"keepalive_s must be > 0, got {self.keepalive_s}")
        if not self.dataset_roots:
            raise ConfigError("dataset_roots must name at least one folder")
        if self.token == "":
            raise ConfigError("token must not be empty; give a long random string or None")
        self._check_upload_tokens()
        if not is_loopback(self.host) and self.token is None and not self.unsafe_no_auth:
            raise ConfigError(
                f"host {self.host!r} is reachable from other machines: set a token "
                "(--token or AIEVAL_TOKEN), or pass --unsafe-no-auth to serve without one"
            )

    def _check_upload_tokens(self) -> None:
        for kind, tokens in (("upload", self.upload_tokens), ("review", self.review_tokens)):
            if tokens and self.token is None:
                raise ConfigError(
                    f"{kind} tokens need the server's own token: start it with --token or"
                    " AIEVAL_TOKEN"
                )
            for name, secret in tokens.items():
                if not _TOKEN_NAME.fullmatch(name):
                    raise ConfigError(
                        f"{kind} token name {name!r}: use 1 to 64 letters, digits, '-' or '_', "
                        "starting with a letter or digit"
                    )
                if not secret:
                    raise ConfigError(f"{kind} token {name!r} must not be empty")
        secrets = [self.token, *self.upload_tokens.values(), *self.review_tokens.values()]
        if len(set(secrets)) != len(secrets):
            raise ConfigError(
                "every upload and review token must differ from the others and from --token"
            )

    def host_allowlist(self) -> frozenset[str]:
        """Every ``Host`` header name accepted (lower case, without port or brackets)."""
        names = {*LOOPBACK_HOSTS, self.host, *self.allowed_hosts}
        return frozenset(n.strip("[]").lower() for n in names)
