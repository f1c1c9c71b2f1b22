"""``aieval github``: run the eval files for the candidate, find each run's baseline, compare,
post or update one pull-request comment, write the job summary and outputs, and decide the
check's result from the outcome.

The decision of each comparison is the promotion policy's (``docs/reports.md``); with several
runs the job's outcome is the worst of them (``block``, then ``inconclusive``, then
``promote``). A run without a baseline is ``inconclusive``: nothing shows it is not worse.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from aieval._terminal import escape_github as escape
from aieval._version import __version__
from aieval.ci._api import BOT_LOGIN, Comment, upsert_comment
from aieval.ci._comment import Section, compose
from aieval.ci._context import GitHubContext
from aieval.errors import ConfigError
from aieval.report import (
    COMMENT_LIMIT,
    PromotionPolicy,
    compare_runs,
    example_texts,
    render_github,
)
from aieval.runner import load_eval, run_eval
from aieval.store import BaselineChoice, RunRow, Store

__all__ = [
    "CHECK_WORDS",
    "OUTCOMES",
    "ActionResult",
    "ActionSettings",
    "EvalComparison",
    "find_baseline",
    "marker",
    "run_action",
]

Outcome = Literal["promote", "block", "inconclusive"]
Check = Literal["pass", "fail"]

#: Outcomes from best to worst: the job's outcome is the worst of its comparisons'.
OUTCOMES: tuple[Outcome, ...] = ("promote", "inconclusive", "block")
_MARKS = {"promote": "✅", "block": "❌", "inconclusive": "❔"}
_WORDS = {"promote": "promote", "block": "blocked", "inconclusive": "inconclusive"}
# a candidate run's problems shown in its section: how many, and the characters of each
_NOTES = 5
_NOTE_CHARS = 500
#: How the check's result reads in a sentence.
CHECK_WORDS: dict[str, str] = {"pass": "passes", "fail": "fails"}
_KEY = re.compile(r"[A-Za-z0-9_.:/-]{1,100}")
# a GitHub login: letters, digits and single hyphens; an app's bot account ends in "[bot]"
_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}(?:\[bot\])?")


@dataclass(frozen=True, slots=True)
class ActionSettings:
    """What the action's inputs ask for.

    Attributes:
        eval_files: the eval files to run for the candidate.
        baseline: a run id or name to compare every candidate run with (``None``: each run's
            latest completed run of the same name and model on ``baseline_branch``).
        baseline_branch: the branch whose runs are baselines (``None``: the pull request's
            base branch, else the branch pushed, else the default branch).
        viewer_url: the aieval viewer's address, for links in the comment.
        policy: the promotion policy.
        checks: how each outcome maps to the check's result.
        comment: post or update the pull-request comment (on ``pull_request`` events).
        comment_key: tells this workflow's comment from another's on the same pull request.
        bot_login: who comments when the token may not read ``GET /user`` (Actions'
            ``GITHUB_TOKEN``: ``github-actions[bot]``; a GitHub App's token: ``<app>[bot]``).
            Only a comment of the token's identity is ever updated.
    """

    eval_files: tuple[Path, ...]
    baseline: str | None = None
    baseline_branch: str | None = None
    viewer_url: str | None = None
    policy: PromotionPolicy = field(default_factory=PromotionPolicy)
    checks: Mapping[str, Check] = field(
        default_factory=lambda: {"promote": "pass", "block": "fail", "inconclusive": "fail"}
    )
    comment: bool = True
    comment_key: str = "aieval"
    bot_login: str = BOT_LOGIN

    def __post_init__(self) -> None:
        if not _LOGIN.fullmatch(self.bot_login):
            raise ConfigError(
                f"bot login {self.bot_login!r}: give a GitHub login, such as {BOT_LOGIN} or "
                "my-app[bot]"
            )
        if set(self.checks) != set(OUTCOMES) or not set(self.checks.values()) <= {"pass", "fail"}:
            raise ConfigError(
                f"checks: map each of {', '.join(OUTCOMES)} to pass or fail, got "
                f"{dict(self.checks)!r}"
            )


@dataclass(frozen=True, slots=True)
class EvalComparison:
    """One candidate run and what it was compared with.

    Attributes:
        eval_file: the eval file that made the run.
        run_id: the candidate run's id.
        name: the run's name.
        model: its model (``None``: recorded predictions without a model).
        outcome: the comparison's outcome (``inconclusive`` without a baseline).
        baseline_id: the baseline run's id, or ``None`` when none was found.
        body: its section as the comment shows it (short, or "" when left out, to keep the
            whole comment within GitHub's limit).
        baseline_line: which baseline was picked and why (see
            :meth:`~aieval.store.BaselineChoice.line`); ``None`` when it was given by id or
            none was found.
    """

    eval_file: Path
    run_id: str
    name: str
    model: str | None
    outcome: Outcome
    baseline_id: str | None
    body: str
    baseline_line: str | None = None


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What ``aieval github`` did.

    Attributes:
        outcome: the worst outcome of the comparisons.
        check: the check's result for it, by the settings' mapping.
        comparisons: each candidate run's comparison.
        body: the comment (and job summary), marker first.
        comment: the comment written, or ``None`` (no pull request, or commenting is off).
    """

    outcome: Outcome
    check: Check
    comparisons: list[EvalComparison]
    body: str
    comment: Comment | None = None

    @property
    def passed(self) -> bool:
        """Whether the check passes."""
        return self.check == "pass"

    def outputs(self) -> dict[str, str]:
        """The step's outputs (``$GITHUB_OUTPUT``)."""
        return {
            "decision": self.outcome,
            "passed": "true" if self.passed else "false",
            "runs": " ".join(c.run_id for c in self.comparisons),
            "baselines": " ".join(c.baseline_id or "-" for c in self.comparisons),
            "comment-id": "" if self.comment is None else str(self.comment.id),
            "comment-url": "" if self.comment is None else self.comment.url,
        }


def marker(key: str) -> str:
    """The hidden first line of the comment, which finds it again on the next run.

    >>> marker("aieval")
    '<!-- aieval:github-comment:aieval -->'
    """
    if not _KEY.fullmatch(key) or "--" in key:
        raise ConfigError(
            f"comment key {key!r}: use 1 to 100 letters, digits and . _ : / - (no '--')"
        )
    return f"<!-- aieval:github-comment:{key} -->"


def run_action(
    settings: ActionSettings,
    context: GitHubContext,
    store: Store,
    *,
    baseline_store: Store | None = None,
    on_run: Callable[[Path], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ActionResult:
    """Run the eval files into ``store``, compare each run with its baseline (in
    ``baseline_store`` when given), and write the comment, job summary and outputs.

    ``on_run`` is called with each eval file as it starts; ``progress`` with one plain line
    per step (reading the eval files, each run and its baseline, the comparison's outcome,
    the summary, posting or updating the comment and its address). The lines hold names and
    ids as stored: a printer escapes them (:func:`aieval._terminal.printable`).

    Raises:
        ConfigError: no eval file, a bad input, or a comment asked for without a token.
        GitHubError: the GitHub API refused a call (the summary and outputs are written first).
    """

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    if not settings.eval_files:
        raise ConfigError("give at least one eval file")
    head = marker(settings.comment_key)
    target = _comment_target(settings, context)
    files = ", ".join(str(path) for path in settings.eval_files)
    say(f"reading {_count(len(settings.eval_files), 'eval file')}: {files}")
    configs = [(path, load_eval(path)) for path in settings.eval_files]  # all checked first
    judged: list[_Judged] = []
    for path, config in configs:
        if on_run is not None:
            on_run(path)
        say(f"running {path}")
        for run in run_eval(config, store=store):
            row = store.get_run(run.id)
            rate = "-" if run.pass_rate is None else f"{100 * run.pass_rate:.1f}%"
            samples = run.summary.samples
            say(f"run {row.id} ({_named(row)}): {row.status}, {samples} samples, pass rate {rate}")
            problems = run.problems
            one = _compare(settings, context, store, baseline_store, path, row, problems)
            against = f"baseline {one.baseline_id}" if one.baseline_id else "no baseline found"
            say(f"compared run {row.id} with {against}: {one.outcome}")
            judged.append(one)
    outcome = max((j.outcome for j in judged), key=OUTCOMES.index)
    check = settings.checks[outcome]
    body, shown = _body(head, outcome, check, judged, context)
    comparisons = [
        EvalComparison(
            j.path, j.run_id, j.name, j.model, j.outcome, j.baseline_id, text, j.baseline_line
        )
        for j, text in zip(judged, shown, strict=True)
    ]
    result = ActionResult(outcome, check, comparisons, body)
    _write_summary(context, body)
    _write_outputs(context, result.outputs())
    if context.summary_path is not None:
        say("wrote the job summary and the step outputs")
    if target is None:
        why = "comment is off" if not settings.comment else "not a pull request"
        say(f"no pull-request comment: {why}")
        return result
    repo, token, number = target
    say(f"posting or updating the comment on pull request #{number} of {repo}")
    comment = asyncio.run(
        upsert_comment(
            api_url=context.api_url,
            repo=repo,
            token=token,
            number=number,
            marker=head,
            body=body,
            bot_login=settings.bot_login,
        )
    )
    say(f"{'created' if comment.created else 'updated'} comment {comment.url}")
    done = ActionResult(outcome, check, comparisons, body, comment)
    _write_outputs(context, {k: v for k, v in done.outputs().items() if k.startswith("comment")})
    return done


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _named(row: RunRow) -> str:
    return f"{row.name} · {row.model}" if row.model else row.name


def _comment_target(
    settings: ActionSettings, context: GitHubContext
) -> tuple[str, str, int] | None:
    """``(repository, token, pull request)`` to comment on, or ``None`` (not asked for, or no
    pull request: a push)."""
    if not settings.comment or context.pull_request is None:
        return None
    if context.token is None or context.repository is None:
        raise ConfigError(
            "commenting on the pull request needs GITHUB_TOKEN and GITHUB_REPOSITORY "
            "(pass github-token to the action, or turn comment off)"
        )
    return context.repository, context.token, context.pull_request


def find_baseline(store: Store, candidate: RunRow, *, branch: str | None) -> RunRow | None:
    """The baseline in ``store`` for ``candidate``: the latest completed run with its name and
    model, made on ``branch`` (any branch when ``None``), other than the candidate itself; one
    on the whole dataset and the candidate's dataset version before a newer one made with
    ``--limit`` or on another version (see :func:`choose_baseline`)."""
    choice = choose_baseline(store, candidate, branch=branch)
    return None if choice is None else choice.run


def choose_baseline(
    store: Store, candidate: RunRow, *, branch: str | None
) -> BaselineChoice | None:
    """:func:`find_baseline`'s run, with why it was picked (and a warning when it is not
    like-for-like), found in SQL."""
    return store.choose_baseline(
        candidate.name,
        candidate,
        branch=branch,
        model=candidate.model,
        same_model=True,
        completed_only=True,
    )


@dataclass(frozen=True, slots=True)
class _Judged:
    """A candidate run compared, its section rendered once the comment's budget is known."""

    path: Path
    run_id: str
    name: str
    model: str | None
    outcome: Outcome
    baseline_id: str | None
    section: Section
    baseline_line: str | None = None


def _compare(
    settings: ActionSettings,
    context: GitHubContext,
    store: Store,
    baseline_store: Store | None,
    path: Path,
    row: RunRow,
    problems: Sequence[str],
) -> _Judged:
    base_store = store if baseline_store is None else baseline_store
    branch = settings.baseline_branch or context.baseline_branch
    chosen = (
        base_store.baseline_for(settings.baseline, row)
        if settings.baseline is not None
        else choose_baseline(base_store, row, branch=branch)
    )
    notes = _notes(row.id, problems)
    model = f" ({_clip(row.model)})" if row.model else ""
    if chosen is None:
        where = f" on branch {branch}" if branch else ""
        with_model = f" with model {row.model}" if row.model else ""
        missing = f"no completed run named {row.name}{with_model}{where} in the baseline store"
        title = f"### {_MARKS['inconclusive']} aieval: **inconclusive** · {_clip(row.name)}"
        body = (
            f"{title}\n\nNo baseline: {escape(missing)}. Run the eval files there first (a "
            f"workflow on push), or give `baseline`. Candidate run {escape(row.id)}."
        )
        pointer = f"No baseline; candidate run {escape(row.id)}."
        section = Section(title + model, pointer, lambda limit: body + notes)
        return _Judged(path, row.id, row.name, row.model, "inconclusive", None, section)
    base = chosen.run if isinstance(chosen, BaselineChoice) else chosen
    comparison = compare_runs(
        store,
        chosen,
        row,
        policy=settings.policy,
        baseline_store=baseline_store,
        max_examples=None,
    )
    texts = example_texts(store, comparison, baseline_store=baseline_store)
    outcome: Outcome = comparison.decision.outcome

    def render(limit: int) -> str:
        text = render_github(
            comparison, viewer_url=settings.viewer_url, texts=texts, limit=limit - len(notes)
        )
        return text.rstrip("\n") + notes

    title = f"### {_MARKS[outcome]} aieval: **{_WORDS[outcome]}** · {_clip(row.name)}{model}"
    pointer = (
        f"Details left out to keep the comment under GitHub's size limit: "
        f"`aieval compare {escape(base.id)} {escape(row.id)}`."
    )
    line = chosen.line() if isinstance(chosen, BaselineChoice) else None
    section = Section(title, pointer, render)
    return _Judged(path, row.id, row.name, row.model, outcome, base.id, section, line)


def _notes(run_id: str, problems: Sequence[str]) -> str:
    """The candidate run's problems, at most a few and each cut short: they are its data."""
    shown = [
        f"\n\n> ⚠️ candidate run {escape(run_id)}: {_clip(p, _NOTE_CHARS)}"
        for p in problems[:_NOTES]
    ]
    if len(problems) > _NOTES:
        shown.append(f"\n\n> … {len(problems) - _NOTES} more problems (aieval show {run_id})")
    return "".join(shown)


def _clip(text: str, most: int = 200) -> str:
    """``text`` escaped, cut to ``most`` characters first."""
    return escape(text if len(text) <= most else text[:most] + "…")


def _body(
    head: str,
    outcome: Outcome,
    check: Check,
    judged: Sequence[_Judged],
    context: GitHubContext,
) -> tuple[str, list[str]]:
    """The comment, within GitHub's limit however many runs it holds, and each run's section
    as shown in it."""
    lead = (
        f"{head}\n\n## {_MARKS[outcome]} aieval: {_WORDS[outcome]} (the check {CHECK_WORDS[check]})"
    )
    table = None
    if len(judged) > 1:
        header = "| eval | model | decision | baseline | candidate |\n" + "| :--- " * 5 + "|"
        rows = [
            f"| {_clip(j.name)} | {_clip(j.model or '-')} | {_MARKS[j.outcome]} "
            f"{_WORDS[j.outcome]} | {escape(j.baseline_id or 'none')} | {escape(j.run_id)} |"
            for j in judged
        ]
        table = (header, rows)
    run = f" · [workflow run]({context.run_url})" if context.run_url else ""
    footer = f"<sub>aieval {__version__}{run}</sub>"
    return compose(lead, table, [j.section for j in judged], footer, limit=COMMENT_LIMIT)


def _write_summary(context: GitHubContext, body: str) -> None:
    if context.summary_path is None:
        return
    with context.summary_path.open("a", encoding="utf-8") as handle:
        handle.write(body)


def _write_outputs(context: GitHubContext, outputs: Mapping[str, str]) -> None:
    """Append ``name<<delimiter`` blocks, GitHub's form for values of any text."""
    if context.output_path is None:
        return
    with context.output_path.open("a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            delimiter = f"aieval_{uuid.uuid4().hex}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
