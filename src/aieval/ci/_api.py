"""The few GitHub REST calls ``aieval github`` makes: learn who the token acts as, find the
pull-request comment that identity wrote under a hidden marker (every page of the comment list),
then update it or create it.

A comment is this action's only when its body starts with the marker *and* its author is the
token's identity: anyone can write the marker into a comment of their own, and updating theirs
would put the verdict under their name. The identity is ``GET /user``'s login (a personal access
token); Actions' ``GITHUB_TOKEN`` and GitHub App tokens may not read ``/user`` (403), and then it
is the configured bot login (``github-actions[bot]`` for ``GITHUB_TOKEN``).

Requests go to ``$GITHUB_API_URL`` (GitHub Enterprise, or a loopback server in tests) through
aiohttp, the HTTP client the providers use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp

from aieval._version import __version__
from aieval.errors import GitHubError

__all__ = ["BOT_LOGIN", "Comment", "GitHubClient", "upsert_comment"]

#: Who comments with Actions' own ``GITHUB_TOKEN``.
BOT_LOGIN = "github-actions[bot]"
_PAGE = 100
# ``GET /user`` refused so: a token of an integration (Actions, a GitHub App), not of a user
_NO_USER = (403, 404)
_TIMEOUT = aiohttp.ClientTimeout(total=60)


@dataclass(frozen=True, slots=True)
class Comment:
    """The pull-request comment ``aieval github`` wrote.

    Attributes:
        id: its id (the same on every run of the workflow for one pull request).
        url: its address on github.com (``html_url``).
        created: it was created now (``False``: an earlier one was updated).
    """

    id: int
    url: str
    created: bool


class GitHubClient:
    """An authenticated client of one repository's REST API."""

    def __init__(self, session: aiohttp.ClientSession, api_url: str, repo: str, token: str):
        self._session = session
        self._api = api_url.rstrip("/")
        self._repo = repo
        self._headers = {
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": f"aieval/{__version__}",
        }

    async def request(
        self, method: str, path: str, *, allow: tuple[int, ...] = (), **kwargs: Any
    ) -> tuple[Any, str | None]:
        """``(JSON body, next page's URL)`` of one call; :class:`GitHubError` on failure. A
        status in ``allow`` is no failure: it comes back as ``(status, None)``."""
        url = path if path.startswith(("http://", "https://")) else self._api + path
        call = f"{method} {url.split('?')[0]}"
        try:
            async with self._session.request(
                method, url, headers=self._headers, timeout=_TIMEOUT, **kwargs
            ) as response:
                text = await response.text()
                if response.status in allow:
                    return response.status, None
                if response.status >= 400:
                    raise GitHubError(_refusal(call, response.status, text))
                link = response.links.get("next")
                body = await response.json(content_type=None) if text else None
                return body, None if link is None else str(link.get("url"))
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise GitHubError(f"{call} failed: {type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # a body that is not JSON
            raise GitHubError(f"{call}: GitHub's answer is not JSON: {exc}") from exc

    async def identity(self, bot_login: str = BOT_LOGIN) -> str:
        """The login the token comments as: ``GET /user``'s, or ``bot_login`` when the token
        may not read ``/user`` (Actions' ``GITHUB_TOKEN``, a GitHub App's token)."""
        user, _ = await self.request("GET", "/user", allow=_NO_USER)
        if isinstance(user, int):
            return bot_login
        login = user.get("login") if isinstance(user, dict) else None
        if not isinstance(login, str) or not login:
            raise GitHubError(f"GET /user: GitHub's answer has no login: {user!r:.200}")
        return login

    async def find_comment(self, number: int, marker: str, author: str) -> dict[str, Any] | None:
        """The oldest comment of issue or pull request ``number`` written by ``author`` (a
        login, compared as GitHub does: case-insensitively) whose body starts with ``marker``,
        reading every page of the list. Another author's comment is never this one, whatever
        its body says."""
        url: str | None = f"/repos/{self._repo}/issues/{number}/comments?per_page={_PAGE}"
        while url is not None:
            page, url = await self.request("GET", url)
            if not isinstance(page, list):
                raise GitHubError(f"GET comments of #{number}: expected a list, got {page!r:.200}")
            for comment in page:
                if (
                    isinstance(comment, dict)
                    and str(comment.get("body", "")).startswith(marker)
                    and _login(comment).casefold() == author.casefold()
                ):
                    return comment
        return None

    async def create_comment(self, number: int, body: str) -> dict[str, Any]:
        """A new comment on issue or pull request ``number``."""
        made, _ = await self.request(
            "POST", f"/repos/{self._repo}/issues/{number}/comments", json={"body": body}
        )
        return _comment(made, "POST comment")

    async def update_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        """Replace the body of comment ``comment_id``."""
        made, _ = await self.request(
            "PATCH", f"/repos/{self._repo}/issues/comments/{comment_id}", json={"body": body}
        )
        return _comment(made, "PATCH comment")


async def upsert_comment(
    *,
    api_url: str,
    repo: str,
    token: str,
    number: int,
    marker: str,
    body: str,
    bot_login: str = BOT_LOGIN,
) -> Comment:
    """Update the comment of pull request ``number`` that the token's identity wrote and that
    starts with ``marker``, or create it: one comment per pull request, marker and author,
    whatever the number of runs. The identity is ``GET /user``'s login, or ``bot_login`` when
    the token may not read ``/user``.

    ``body`` must start with ``marker``.

    Raises:
        GitHubError: a call failed (the message names it and the status).
    """
    if not body.startswith(marker):
        raise ValueError("the comment body must start with its marker")
    async with aiohttp.ClientSession(trust_env=True) as session:
        client = GitHubClient(session, api_url, repo, token)
        author = await client.identity(bot_login)
        found = await client.find_comment(number, marker, author)
        if found is not None:
            made = await client.update_comment(int(found["id"]), body)
            return Comment(int(made["id"]), str(made.get("html_url", "")), created=False)
        made = await client.create_comment(number, body)
        return Comment(int(made["id"]), str(made.get("html_url", "")), created=True)


def _comment(value: Any, call: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("id"), int):
        raise GitHubError(f"{call}: GitHub's answer has no comment id: {value!r:.200}")
    return value


def _login(comment: dict[str, Any]) -> str:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else ""


def _refusal(call: str, status: int, text: str) -> str:
    message = text.strip()[:300] or "(no message)"
    if status == 401:  # the token itself is unknown (unset, mistyped, expired or revoked)
        return (
            f"{call}: the GitHub token was refused (401): check GITHUB_TOKEN (the action's "
            f"github-token input) is set and not expired; GitHub said: {message}"
        )
    hint = ""
    if status in (403, 404):  # a valid token without the right to write (or to see) the PR
        hint = (
            "; the token needs `pull-requests: write` (the workflow's `permissions:`), and on a "
            "pull request from a fork GITHUB_TOKEN is read-only"
        )
    return f"{call}: GitHub answered {status}: {message}{hint}"
