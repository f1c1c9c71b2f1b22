"""A loopback stand-in for GitHub's REST API: the token's user and issue comments, paginated as
GitHub does (``per_page``, ``page`` and a ``Link: <...>; rel="next"`` header), recording every
call. Like Actions' ``GITHUB_TOKEN``, the token may not read ``GET /user`` (403) unless
``user_login`` is set (a personal access token's user); comments are written as ``author``.

It runs an aiohttp app on 127.0.0.1 (ephemeral port) in a background thread with its own loop.

Example::

    with GitHubServer(token="t") as github:
        github.seed(7, ["an unrelated comment"] * 150)
        ...  # GITHUB_API_URL=github.url
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["GitHubServer", "RecordedCall"]


@dataclass(frozen=True)
class RecordedCall:
    """One REST call: method, path, query and JSON body."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    authorization: str | None


@dataclass
class GitHubServer:
    """Issue comments of one repository (``owner/name``), behind a bearer token."""

    repo: str = "owner/name"
    token: str = "test-token"
    calls: list[RecordedCall] = field(default_factory=list)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    refuse_writes: int | None = None  # answer POST/PATCH with this status (a read-only token)
    user_login: str | None = None  # GET /user's login; None: 403, as for GITHUB_TOKEN
    bot_login: str = "github-actions[bot]"  # who comments when user_login is None
    _next_id: int = 1000
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> GitHubServer:
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self._thread.start()
        if not started.wait(30):
            raise RuntimeError("the fake GitHub server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    @property
    def url(self) -> str:
        """The API's base URL (``GITHUB_API_URL``)."""
        return f"http://127.0.0.1:{self._port}"

    def seed(self, number: int, bodies: list[str], *, login: str = "someone") -> None:
        """Comments already on pull request ``number``."""
        for body in bodies:
            self._add(number, body, login)

    def _add(self, number: int, body: str, login: str) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            comment = {
                "id": self._next_id,
                "body": body,
                "user": {"login": login},
                "html_url": f"https://github.test/{self.repo}/pull/{number}#c{self._next_id}",
            }
            self.comments.setdefault(number, []).append(comment)
            return comment

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        base = f"/repos/{self.repo}/issues"
        app.router.add_get("/user", self._user)
        app.router.add_get(base + "/{number}/comments", self._list)
        app.router.add_post(base + "/{number}/comments", self._create)
        app.router.add_patch(base + "/comments/{id}", self._update)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        started.set()
        self._loop.run_forever()

    async def _record(self, request: web.Request) -> web.Response | None:
        body = await request.json() if request.can_read_body else None
        self.calls.append(
            RecordedCall(
                request.method,
                request.path,
                dict(request.query),
                body,
                request.headers.get("Authorization"),
            )
        )
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"message": "Bad credentials"}, status=401)
        text = body.get("body") if isinstance(body, dict) else None
        if isinstance(text, str) and len(text) > 65_536:  # GitHub's own limit
            return web.json_response(
                {"message": "Validation Failed", "errors": [{"code": "custom", "field": "body",
                 "message": "body is too long (maximum is 65536 characters)"}]},
                status=422,
            )  # fmt: skip
        if request.method != "GET" and self.refuse_writes is not None:
            return web.json_response(
                {"message": "Resource not accessible by integration"}, status=self.refuse_writes
            )
        return None

    @property
    def author(self) -> str:
        """Who the token's comments are written by."""
        return self.user_login or self.bot_login

    async def _user(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        if refused is not None:
            return refused
        if self.user_login is None:
            return web.json_response(
                {"message": "Resource not accessible by integration"}, status=403
            )
        return web.json_response({"login": self.user_login, "id": 1, "type": "User"})

    async def _list(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        if refused is not None:
            return refused
        number = int(request.match_info["number"])
        per_page = int(request.query.get("per_page", "30"))
        page = int(request.query.get("page", "1"))
        items = self.comments.get(number, [])
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            nxt = request.url.update_query({"per_page": str(per_page), "page": str(page + 1)})
            headers["Link"] = f'<{nxt}>; rel="next"'
        return web.json_response(chunk, headers=headers)

    async def _create(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        if refused is not None:
            return refused
        body = self.calls[-1].body
        made = self._add(int(request.match_info["number"]), body["body"], self.author)
        return web.json_response(made, status=201)

    async def _update(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        if refused is not None:
            return refused
        wanted = int(request.match_info["id"])
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == wanted:
                    # a token with write access may edit anyone's comment, as on GitHub
                    comment["body"] = self.calls[-1].body["body"]
                    return web.json_response(comment)
        return web.json_response({"message": "Not Found"}, status=404)

    def marked(self, number: int, marker: str) -> list[dict[str, Any]]:
        """The comments of ``number`` whose body starts with ``marker``."""
        return [c for c in self.comments.get(number, []) if c["body"].startswith(marker)]
