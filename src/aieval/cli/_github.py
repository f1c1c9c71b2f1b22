"""``aieval github``: what the GitHub Action runs (see ``action.yml`` and ``docs/ci.md``)."""

from __future__ import annotations

import enum
import os
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from aieval._terminal import printable
from aieval.cli._exits import EXIT_GITHUB
from aieval.cli._options import (
    BaselineDbOption,
    DbOption,
    OutputOption,
    existing_store,
    store_location,
    write_text,
)
from aieval.cli._print import err, out

if TYPE_CHECKING:
    from aieval.ci import ActionResult

__all__ = ["github_command"]


class CheckResult(enum.StrEnum):
    """What an outcome makes of the check."""

    passed = "pass"
    failed = "fail"


def _check(name: str) -> Any:
    return typer.Option(
        f"--on-{name}",
        help=f"The check's result when the decision is {name}.",
        envvar=f"AIEVAL_GITHUB_ON_{name.upper()}",
    )


def _env(name: str, help: str, *decls: str) -> Any:
    """An option the Action also sets through ``AIEVAL_GITHUB_<name>``."""
    return typer.Option(*decls, help=help, envvar=f"AIEVAL_GITHUB_{name}")


def github_command(
    eval_files: Annotated[
        list[Path],
        typer.Argument(
            help="Eval files to run for the candidate.", envvar="AIEVAL_GITHUB_EVAL_FILES"
        ),
    ],
    db: DbOption = None,
    baseline: Annotated[
        str | None,
        _env("BASELINE", "Baseline run id or name (default: latest run on the baseline branch)."),
    ] = None,
    baseline_branch: Annotated[
        str | None,
        _env("BASELINE_BRANCH", "Branch whose runs are baselines (default: the PR's base branch)."),
    ] = None,
    baseline_db: BaselineDbOption = None,
    viewer_url: Annotated[
        str | None, _env("VIEWER_URL", "aieval viewer address, for links.", "--viewer-url")
    ] = None,
    policy_file: Annotated[
        Path | None,
        typer.Option(
            "--policy", help="Promotion policy, YAML or JSON.", envvar="AIEVAL_GITHUB_POLICY"
        ),
    ] = None,
    on_promote: Annotated[CheckResult, _check("promote")] = (CheckResult.passed),
    on_block: Annotated[CheckResult, _check("block")] = CheckResult.failed,
    on_inconclusive: Annotated[CheckResult, _check("inconclusive")] = (CheckResult.failed),
    comment: Annotated[
        bool, _env("COMMENT", "Post or update the PR comment.", "--comment/--no-comment")
    ] = True,
    comment_key: Annotated[
        str, _env("COMMENT_KEY", "Tells this comment from another workflow's on the same PR.")
    ] = "aieval",
    bot_login: Annotated[
        str,
        typer.Option(
            # escaped: help is Rich markup, where "[bot]" would be read as a tag and vanish
            help=escape(
                "Who the token comments as when it may not read GET /user (GITHUB_TOKEN:"
                " github-actions[bot]); only that author's comment is updated."
            ),
            envvar="AIEVAL_GITHUB_BOT_LOGIN",
        ),
    ] = "github-actions[bot]",
    output: OutputOption = None,
) -> None:
    """Run eval files, compare each run with its baseline, and comment on the pull request.

    Reads GitHub Actions' environment (GITHUB_TOKEN, GITHUB_EVENT_PATH, GITHUB_API_URL...),
    writes the job summary and the step outputs, and updates one comment per pull request.

    Exit codes: 0 the check passes, 1 it fails (by --on-promote, --on-block and
    --on-inconclusive: by default only promote passes), 2 usage error, 5 the GitHub API
    refused the comment (the summary and outputs are written).
    """
    from aieval.ci import ActionSettings, GitHubContext, run_action
    from aieval.errors import GitHubError
    from aieval.report import PromotionPolicy
    from aieval.store import Store

    settings = ActionSettings(
        eval_files=tuple(eval_files),
        baseline=baseline,
        baseline_branch=baseline_branch,
        viewer_url=viewer_url,
        policy=PromotionPolicy.from_file(policy_file) if policy_file else PromotionPolicy(),
        checks={
            "promote": on_promote.value,
            "block": on_block.value,
            "inconclusive": on_inconclusive.value,
        },
        comment=comment,
        comment_key=comment_key,
        bot_login=bot_login or "github-actions[bot]",
    )
    context = GitHubContext.from_env(os.environ)
    store = Store(store_location(db))  # created if new, as `aieval run` does
    base_store = existing_store(baseline_db, untrusted=True) if baseline_db is not None else None
    started = time.monotonic()
    try:
        result = run_action(settings, context, store, baseline_store=base_store, progress=_progress)
    except GitHubError as exc:
        err.print(f"error: {exc}", style="bold red", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_GITHUB) from None
    if output is not None:
        write_text(result.body, output)
    _print_result(result)
    _progress(summary_line(result, time.monotonic() - started))
    if not result.passed:
        raise typer.Exit(1)


def _print_result(result: ActionResult) -> None:
    """Each comparison's outcome and baseline, the decision, and the comment written."""
    from aieval.ci import CHECK_WORDS

    for item in result.comparisons:
        out.print(
            f"{item.name} ({item.run_id}): {item.outcome}, baseline {item.baseline_id or 'none'}",
            highlight=False,
        )
        if item.baseline_line is not None:
            out.print(f"  {printable(item.baseline_line)}", highlight=False, markup=False)
    colour = "green" if result.passed else "red"
    verdict = f"decision {result.outcome}: the check {CHECK_WORDS[result.check]}"
    out.print(verdict, style=f"bold {colour}", highlight=False)
    if result.comment is not None:
        verb = "created" if result.comment.created else "updated"
        out.print(f"{verb} comment {result.comment.url}", highlight=False)


def _progress(line: str) -> None:
    """One step, as a plain line on stderr (a CI log shows it as it happens; no progress bar,
    no colour codes in a log)."""
    err.print(printable(line), highlight=False, soft_wrap=True)


def summary_line(result: ActionResult, seconds: float) -> str:
    """What ``aieval github`` did, in one line: the runs and their outcomes, the decision, the
    check and the comment."""
    from aieval.ci import CHECK_WORDS, OUTCOMES

    outcomes = Counter(item.outcome for item in result.comparisons)
    counts = ", ".join(f"{outcomes[o]} {o}" for o in OUTCOMES if outcomes[o])
    runs = len(result.comparisons)
    comment = (
        "no comment"
        if result.comment is None
        else f"comment {'created' if result.comment.created else 'updated'} {result.comment.url}"
    )
    return (
        f"aieval github: {runs} run{'' if runs == 1 else 's'} compared in {seconds:.1f} s "
        f"({counts}); decision {result.outcome}, the check {CHECK_WORDS[result.check]}; {comment}"
    )
