"""Continuous integration: what the GitHub Action of this repository runs (``aieval github``).

It runs eval files for the candidate, finds each run's baseline (by name, model and branch, or
as given, in the same store or another), compares them with the promotion policy, and posts or
updates one pull-request comment found by a hidden marker; see ``docs/ci.md``.
"""

from aieval.ci._action import (
    CHECK_WORDS,
    OUTCOMES,
    ActionResult,
    ActionSettings,
    EvalComparison,
    find_baseline,
    marker,
    run_action,
)
from aieval.ci._api import Comment, GitHubClient, upsert_comment
from aieval.ci._context import GitHubContext

__all__ = [
    "CHECK_WORDS",
    "OUTCOMES",
    "ActionResult",
    "ActionSettings",
    "Comment",
    "EvalComparison",
    "GitHubClient",
    "GitHubContext",
    "find_baseline",
    "marker",
    "run_action",
    "upsert_comment",
]
