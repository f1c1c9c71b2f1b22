"""What a GitHub Actions job tells ``aieval github`` through its environment: the API, the
repository, the token, the event (which pull request, which base branch), and the files where a
step writes its summary and outputs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError

__all__ = ["GitHubContext"]


@dataclass(frozen=True, slots=True)
class GitHubContext:
    """The job's GitHub context (everything ``None`` outside GitHub Actions).

    Attributes:
        api_url: the REST API's base URL (``$GITHUB_API_URL``, default ``https://api.github.com``).
        repository: ``owner/name``.
        token: the token to comment with (``$GITHUB_TOKEN``).
        pull_request: the pull request's number, on a ``pull_request`` event.
        base_branch: the pull request's base branch.
        branch: the branch pushed (a ``push`` event) or the pull request's head branch.
        default_branch: the repository's default branch.
        summary_path: ``$GITHUB_STEP_SUMMARY``.
        output_path: ``$GITHUB_OUTPUT``.
        run_url: the address of this workflow run.
    """

    api_url: str = "https://api.github.com"
    repository: str | None = None
    token: str | None = None
    pull_request: int | None = None
    base_branch: str | None = None
    branch: str | None = None
    default_branch: str | None = None
    summary_path: Path | None = None
    output_path: Path | None = None
    run_url: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHubContext:
        """Read the context from GitHub Actions' environment variables and event file.

        Raises:
            ConfigError: ``$GITHUB_EVENT_PATH`` names a file that is not a JSON object.
        """
        event = _event(env.get("GITHUB_EVENT_PATH"))
        pull = _object(event.get("pull_request"))
        number = pull.get("number")
        repo = _object(event.get("repository"))
        branch = env.get("GITHUB_HEAD_REF") or (
            env.get("GITHUB_REF_NAME") if env.get("GITHUB_REF_TYPE") == "branch" else None
        )
        server, repository, run_id = (
            env.get("GITHUB_SERVER_URL"),
            env.get("GITHUB_REPOSITORY") or None,
            env.get("GITHUB_RUN_ID"),
        )
        return cls(
            api_url=env.get("GITHUB_API_URL") or "https://api.github.com",
            repository=repository,
            token=env.get("GITHUB_TOKEN") or None,
            pull_request=number if isinstance(number, int) else None,
            base_branch=_text(_object(pull.get("base")).get("ref")),
            branch=branch or None,
            default_branch=_text(repo.get("default_branch")),
            summary_path=_path(env.get("GITHUB_STEP_SUMMARY")),
            output_path=_path(env.get("GITHUB_OUTPUT")),
            run_url=(
                f"{server}/{repository}/actions/runs/{run_id}"
                if server and repository and run_id
                else None
            ),
        )

    @property
    def baseline_branch(self) -> str | None:
        """Where the baseline runs: a pull request's base branch, else the pushed branch (the
        previous run on it), else the default branch."""
        return self.base_branch or self.branch or self.default_branch


def _event(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {path}: cannot read the event: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"GITHUB_EVENT_PATH {path}: the event is not a JSON object")
    return data


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None
