"""What a refused GitHub API call says: a token GitHub does not know (401) is a token problem,
a token without the right to write (403) is a permissions problem; each names its fix."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from tests.support.github_server import GitHubServer

from aieval.ci import marker, upsert_comment
from aieval.errors import GitHubError

MARKER = marker("aieval")


@pytest.fixture
def github() -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        yield server


def _upsert(github: GitHubServer, token: str) -> None:
    asyncio.run(
        upsert_comment(
            api_url=github.url,
            repo=github.repo,
            token=token,
            number=7,
            marker=MARKER,
            body=MARKER + "\nverdict",
        )
    )


def test_a_refused_token_says_the_token_is_bad_not_its_permissions(
    github: GitHubServer,
) -> None:
    with pytest.raises(GitHubError) as caught:
        _upsert(github, "expired-token")
    message = str(caught.value)
    assert "the GitHub token was refused (401)" in message
    assert "GITHUB_TOKEN" in message and "not expired" in message
    assert "Bad credentials" in message  # GitHub's own words are kept
    assert "pull-requests: write" not in message
    assert github.comments == {}


def test_a_token_without_write_access_keeps_the_permissions_hint(github: GitHubServer) -> None:
    github.refuse_writes = 403
    with pytest.raises(GitHubError) as caught:
        _upsert(github, github.token)
    message = str(caught.value)
    assert "GitHub answered 403" in message and "pull-requests: write" in message
    assert "token was refused" not in message
