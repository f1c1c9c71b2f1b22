"""Host allowlist, same-origin state changes, and the bearer token (header or cookie).

Checks run in this order, before any route: the ``Host`` header must be allowed (DNS
rebinding); a request that changes state and carries an ``Origin`` must come from this
server's own origin (CSRF); and when a token is set, the request must present it as
``Authorization: Bearer T`` or in the viewer's cookie. ``GET /?token=T`` trades the token for
that cookie (HttpOnly, SameSite=Strict), since a browser's EventSource cannot send headers.
An upload token (by name) reaches only the upload endpoints; its name goes with the request
(``scope[UPLOADER]``) to say whose runs it may write. A review token (by reviewer name)
reaches only the viewer's page and files and the review endpoints, which no other token
reaches; its name goes with the request (``scope[REVIEWER]``) and labels as that reviewer.
Making a review queue (``POST /api/review/queues``) is the owner's: the server's own token
reaches that one review endpoint, and the endpoint refuses review tokens.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["NOT_ACCEPTED", "REVIEWER", "TOKEN_COOKIE", "UPLOADER", "SecurityMiddleware"]

TOKEN_COOKIE = "aieval_token"
#: The 401 message for a token that was sent but is not this server's.
NOT_ACCEPTED = "the token was not accepted"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The request scope's key for the name of the upload token it came with (absent: the
#: server's own token, or no token set).
UPLOADER = "aieval.uploader"
#: What an upload token may reach.
_UPLOAD_ROUTES = frozenset({("POST", "/api/runs/import"), ("GET", "/api/runs/import/holding")})
#: The request scope's key for the reviewer name of the review token it came with.
REVIEWER = "aieval.reviewer"
#: Where the review endpoints are: only a review token reaches them.
REVIEW_PREFIX = "/api/review/"
#: Making a review queue: the one review endpoint for the server's own token (not reviewers).
_MAKE_QUEUE = ("POST", "/api/review/queues")
#: The viewer's review page.
REVIEW_PAGE = b"/static/review.html"


def _review_page(path: str) -> bool:
    """What a review token may reach besides the review endpoints: the viewer's page and its
    static files (the review page is one of them)."""
    return path == "/" or path.startswith("/static/")


#: Sent with every response: the viewer loads nothing but its own files, never runs inline
#: script, and cannot be framed (clickjacking) or leak its URL (which may hold run names).
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
        b"form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityMiddleware:
    """Pure ASGI middleware (it must not buffer event streams)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: frozenset[str],
        token: str | None,
        upload_tokens: Mapping[str, str] | None = None,
        review_tokens: Mapping[str, str] | None = None,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.token = token
        self.upload_tokens = dict(upload_tokens or {})
        self.review_tokens = dict(review_tokens or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        headers = Headers(scope=scope)
        host_header = headers.get("host", "")
        if _hostname(host_header) not in self.allowed_hosts:
            await _deny(
                send,
                400,
                f"host {host_header!r} is not allowed on this server",
                "start the server with --allowed-host NAME to accept it",
            )
            return
        origin = headers.get("origin")
        if (
            scope["method"] not in _SAFE_METHODS
            and origin is not None
            and not _same_origin(origin, host_header, scope.get("scheme", "http"))
        ):
            await _deny(
                send,
                403,
                f"cross-origin request from {origin!r} refused",
                "send state-changing requests from the server's own origin",
            )
            return
        reviewing = scope["path"].startswith(REVIEW_PREFIX)
        if self.token is None and reviewing:
            await _deny(
                send,
                403,
                "the review queue needs review tokens",
                "start the server with --token and a --review-token NAME=TOKEN per reviewer",
            )
            return
        if self.token is not None:
            if _query_token(scope) is not None and scope["path"] == "/":
                await self._trade_for_cookie(scope, send)
                return
            given = _given_token(headers)
            if given is None:
                await _deny(
                    send,
                    401,
                    "this server needs a token",
                    "send 'Authorization: Bearer TOKEN', or open /?token=TOKEN once",
                    extra_headers={"www-authenticate": "Bearer"},
                )
                return
            own = self._matches(given)
            uploader = None if own else self._named(self.upload_tokens, given)
            reviewer = None if own or uploader else self._named(self.review_tokens, given)
            if reviewer is not None:
                if not (reviewing or _review_page(scope["path"])):
                    await _deny(
                        send,
                        403,
                        f"review token {reviewer!r} may only review",
                        "open the viewer's review page; read runs with the server's own token",
                    )
                    return
                scope[REVIEWER] = reviewer
            elif reviewing and not (own and (scope["method"], scope["path"]) == _MAKE_QUEUE):
                await _deny(
                    send,
                    403,
                    "this token has no review right",
                    "label with a review token of your own (--review-token NAME=TOKEN)",
                )
                return
            elif uploader is not None:
                if (scope["method"], scope["path"]) not in _UPLOAD_ROUTES:
                    await _deny(
                        send,
                        403,
                        f"upload token {uploader!r} may only upload runs",
                        "use it with aieval push; read with the server's own token",
                    )
                    return
                scope[UPLOADER] = uploader
            elif not own:
                # same status as no token, and nothing about the right one
                await _deny(
                    send,
                    401,
                    NOT_ACCEPTED,
                    "send the token this server was started with (--token or AIEVAL_TOKEN)",
                    extra_headers={"www-authenticate": 'Bearer error="invalid_token"'},
                )
                return
        await self.app(scope, receive, send)

    def _matches(self, given: str) -> bool:
        assert self.token is not None
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _named(self, tokens: Mapping[str, str], given: str) -> str | None:
        """The name of the token of ``tokens`` that ``given`` is, or ``None``."""
        found = None
        for name, secret in tokens.items():  # each compared: no early exit
            if hmac.compare_digest(given.encode(), secret.encode()):
                found = name
        return found

    async def _trade_for_cookie(self, scope: Scope, send: Send) -> None:
        given = _query_token(scope) or ""
        reviewer = not self._matches(given) and self._named(self.review_tokens, given)
        if not (self._matches(given) or reviewer):
            await _deny(send, 401, NOT_ACCEPTED, "check the token the server printed")
            return
        # a reviewer's browser goes to the review page (the rest of the viewer is not theirs)
        page = REVIEW_PAGE if reviewer else b"/"
        cookie = f"{TOKEN_COOKIE}={given}; HttpOnly; SameSite=Strict; Path=/"
        # the redirect drops the token from the address bar and the browser history
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", page),
                    (b"set-cookie", cookie.encode()),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _given_token(headers: Headers) -> str | None:
    """The token the request presents (``Authorization: Bearer T``, else the viewer's
    cookie); None when it presents none (another scheme, an unreadable cookie)."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    if "cookie" not in headers:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers["cookie"])
    except Exception:
        return None
    return jar[TOKEN_COOKIE].value if TOKEN_COOKIE in jar else None


def _hostname(host_header: str) -> str:
    """``Host`` header without its port: ``[::1]:8765`` -> ``::1``, ``a.b:80`` -> ``a.b``."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        return value.partition(":")[0]
    return value


def _same_origin(origin: str, host_header: str, scheme: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme == scheme and parts.netloc.lower() == host_header.strip().lower()


def _query_token(scope: Scope) -> str | None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = query.get("token")
    return values[0] if values else None


async def _deny(
    send: Send,
    status: int,
    message: str,
    reason: str,
    extra_headers: Mapping[str, str] | None = None,
) -> None:
    body = json.dumps({"message": message, "reasons": [reason]}).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(k.encode(), v.encode()) for k, v in (extra_headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending
