"""``aieval report``, ``compare``, ``diff`` and ``schema``: one stored run reported, two runs
compared (with the promotion decision) or diffed example by example, and the JSON Schemas."""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._options import (
    BaselineDbOption,
    DbOption,
    Format,
    FormatOption,
    OutputOption,
    RunRef,
    existing_store,
    write_text,
)
from aieval.cli._print import err, out
from aieval.errors import UserError

if TYPE_CHECKING:
    from aieval.report import IntervalMethod, PromotionPolicy
    from aieval.store import Store

__all__ = [
    "CompareFormat",
    "IntervalChoice",
    "compare_command",
    "diff_command",
    "report_command",
    "schema_app",
]

Baseline = Annotated[
    str,
    typer.Argument(
        help="Baseline run id, or name: its latest other run that completed, on the whole "
        "dataset and the candidate's dataset version (the choice is printed, and why)."
    ),
]
Candidate = Annotated[str, typer.Argument(help="Candidate run id, or name (latest).")]


class IntervalChoice(enum.StrEnum):
    """``--interval-method``: closed forms from ``--bootstrap-max-n`` values on, or always the
    seeded bootstrap."""

    auto = "auto"
    bootstrap = "bootstrap"


IntervalMethodOption = Annotated[
    IntervalChoice | None,
    typer.Option(
        "--interval-method",
        help="auto: the seeded bootstrap below --bootstrap-max-n values, closed forms (Student "
        "t, Wilson, paired t) from it on; bootstrap: the bootstrap at any size (with a "
        "progress bar on a terminal). Default: the policy's, else auto.",
    ),
]
BootstrapMaxNOption = Annotated[
    int | None,
    typer.Option(
        "--bootstrap-max-n",
        metavar="N",
        help="Samples in a report column (paired examples in a comparison) from which auto "
        "uses closed forms. Default: the policy's, else 20000.",
    ),
]


def report_command(
    run_ref: RunRef,
    db: DbOption = None,
    fmt: FormatOption = Format.text,
    output: OutputOption = None,
    slice_by: Annotated[
        list[str] | None,
        typer.Option("--slice", help="Break results down by this metadata field (repeatable)."),
    ] = None,
    interval_method: IntervalMethodOption = None,
    bootstrap_max_n: BootstrapMaxNOption = None,
) -> None:
    """Report a stored run: pass rate and weighted score with CIs, grades, gates, criteria."""
    from aieval.report import IntervalPolicy, build_report

    method: IntervalMethod = "bootstrap" if interval_method is IntervalChoice.bootstrap else "auto"
    store = existing_store(db)
    with _bootstrap_progress(method):
        report = build_report(
            store,
            run_ref,
            slice_by=slice_by or (),
            interval_method=method,
            bootstrap_max_n=(
                IntervalPolicy().bootstrap_max_n if bootstrap_max_n is None else bootstrap_max_n
            ),
        )
    _emit(report, fmt, output)


class CompareFormat(enum.StrEnum):
    """``aieval compare``'s formats: the shared ones and ``github`` (one pull-request comment)."""

    text = "text"
    json = "json"
    markdown = "markdown"
    md = "md"
    html = "html"
    github = "github"


def compare_command(
    baseline: Baseline,
    candidate: Candidate,
    db: DbOption = None,
    fmt: Annotated[
        CompareFormat,
        typer.Option(
            "--format",
            "-f",
            help="text (terminal), json, markdown or md, html, or github (a pull-request "
            "comment under GitHub's size limit).",
        ),
    ] = CompareFormat.text,
    output: OutputOption = None,
    margin: Annotated[
        float | None, typer.Option(help="Non-inferiority margin, weighted-score points.")
    ] = None,
    alpha: Annotated[float | None, typer.Option(help="One-sided significance level.")] = None,
    gate_tolerance: Annotated[
        float | None,
        typer.Option("--gate-tolerance", help="Allowed rise in gate failure rate (0.02 = 2 pp)."),
    ] = None,
    policy_file: Annotated[
        Path | None, typer.Option("--policy", help="Promotion policy, YAML or JSON.")
    ] = None,
    baseline_db: BaselineDbOption = None,
    viewer_url: Annotated[
        str | None,
        typer.Option("--viewer-url", help="aieval viewer address; github format links into it."),
    ] = None,
    interval_method: IntervalMethodOption = None,
    bootstrap_max_n: BootstrapMaxNOption = None,
) -> None:
    """Compare a candidate run with its baseline and decide whether it may replace it.

    Exit codes: 0 promote (every rule holds), 1 blocked (a regression shown or a rule broken),
    3 inconclusive (nothing failed, but the data cannot show the candidate is not worse: too
    few examples, or a margin too tight for them; CI should treat it as not promoting),
    2 usage error (such as an unknown run).
    """
    from aieval.report import compare_runs

    github = fmt is CompareFormat.github
    if viewer_url is not None and not github:
        raise UserError("--viewer-url applies to --format github only")
    policy = _policy(
        policy_file,
        margin=margin,
        alpha=alpha,
        gate_tolerance=gate_tolerance,
        interval_method=interval_method.value if interval_method is not None else None,
        bootstrap_max_n=bootstrap_max_n,
    )
    store = existing_store(db)
    base_store = existing_store(baseline_db, untrusted=True) if baseline_db is not None else None
    with _bootstrap_progress(policy.interval_method):
        comparison = compare_runs(
            store,
            baseline,
            candidate,
            policy=policy,
            baseline_store=base_store,
            # the github format counts every regression and lists as many as fit
            max_examples=None if github else 200,
        )
    data = comparison.to_dict()
    decision = data["decision"]
    choice = comparison.baseline_choice
    if choice is not None and (output is not None or fmt is not CompareFormat.text):
        # which baseline a name picked, and why, whatever the format (the text document has
        # it): on stderr beside a document on stdout, so a pipe still gets one document
        console = out if output is not None else err
        style = "bold yellow" if choice.warning else None
        console.print(printable(choice.line()), style=style, highlight=False, markup=False)
    if output is not None or fmt is not CompareFormat.text:
        # the verdict is always visible, even when the document goes to a file or a pipe
        colour = {"promote": "green", "inconclusive": "yellow"}.get(comparison.outcome, "red")
        console = out if output is not None else err
        console.print(decision["summary"], style=f"bold {colour}", highlight=False)
    if github:
        from aieval.report import example_texts, render_github

        texts = example_texts(store, data, baseline_store=base_store)
        write_text(render_github(data, viewer_url=viewer_url, texts=texts), output)
        if output is not None:
            out.print(f"wrote {output}", highlight=False)
    else:
        _emit(data, Format(fmt.value), output)
    if comparison.decision.exit_code:
        raise typer.Exit(comparison.decision.exit_code)


def diff_command(
    baseline: Baseline,
    candidate: Candidate,
    db: DbOption = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="Also list examples that did not change.")
    ] = False,
    limit: Annotated[int, typer.Option(help="At most N rows per table.")] = 20,
    full: Annotated[
        bool, typer.Option("--full", help="Print inputs, answers and reasons uncut.")
    ] = False,
) -> None:
    """Per-example changes between two runs: regressions, improvements, optionally the rest;
    then each listed regression and improvement with both runs' answers and scorer reasons."""
    from aieval.cli._samples import print_diff_samples
    from aieval.report import compare_runs, render_diff

    store = existing_store(db)
    compared = compare_runs(store, baseline, candidate, max_examples=None)
    comparison = compared.to_dict()
    if compared.baseline_choice is not None:
        choice = compared.baseline_choice
        style = "bold yellow" if choice.warning else None
        out.print(printable(choice.line()), style=style, highlight=False, markup=False)
    unchanged = _unchanged(store, comparison) if show_all else None
    render_diff(comparison, limit=limit, unchanged=unchanged, console=out)
    print_diff_samples(out, store, comparison, limit=limit, full=full)


def _unchanged(store: Store, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Paired examples that are neither regressions nor improvements, in baseline order."""
    from aieval.report import describe_changes, example_numbers

    changed = {r["id"] for r in data["regressions"]} | {r["id"] for r in data["improvements"]}
    cand = {
        s.id: example_numbers(s)
        for s in store.iter_samples(data["candidate"]["id"])
        if s.id not in changed
    }
    rows = []
    for sample in store.iter_samples(data["baseline"]["id"]):
        if sample.id in changed or sample.id not in cand:
            continue
        b, c = example_numbers(sample), cand[sample.id]
        delta = (
            None
            if b.weighted_score is None or c.weighted_score is None
            else c.weighted_score - b.weighted_score
        )
        rows.append(
            {
                "id": b.id,
                "delta": delta,
                "changes": describe_changes(b, c),
                "baseline": {
                    "passed": b.passed,
                    "grade": b.grade,
                    "weighted_score": b.weighted_score,
                },
                "candidate": {
                    "passed": c.passed,
                    "grade": c.grade,
                    "weighted_score": c.weighted_score,
                },
            }
        )
    return rows


schema_app = typer.Typer(
    cls=HelpGroup, help="Print the published JSON Schemas.", no_args_is_help=False
)


@schema_app.command("report", cls=HelpCommand)
def schema_report_command() -> None:
    """The JSON Schema (draft 2020-12) of `aieval report --format json`."""
    from aieval.report import report_schema

    sys.stdout.write(json.dumps(report_schema(), indent=2) + "\n")


@schema_app.command("comparison", cls=HelpCommand)
def schema_comparison_command() -> None:
    """The JSON Schema (draft 2020-12) of `aieval compare --format json`."""
    from aieval.report import comparison_schema

    sys.stdout.write(json.dumps(comparison_schema(), indent=2) + "\n")


def _policy(
    path: Path | None,
    *,
    margin: float | None,
    alpha: float | None,
    gate_tolerance: float | None,
    interval_method: str | None = None,
    bootstrap_max_n: int | None = None,
) -> PromotionPolicy:
    """The promotion policy: the file's (or the defaults), then the command-line overrides."""
    from aieval.report import PromotionPolicy

    base = PromotionPolicy.from_file(path) if path is not None else PromotionPolicy()
    overrides = {
        "noninferiority_margin": margin,
        "alpha": alpha,
        "gate_failure_tolerance": gate_tolerance,
        "interval_method": interval_method,
        "bootstrap_max_n": bootstrap_max_n,
    }
    data = {**base.to_dict(), **{k: v for k, v in overrides.items() if v is not None}}
    return PromotionPolicy.from_mapping(data, source="command-line options")


@contextmanager
def _bootstrap_progress(method: str) -> Iterator[None]:
    """A progress bar of the bootstrap's resamples on a terminal's stderr when the bootstrap
    is forced (at a million samples it takes a while); nothing otherwise."""
    if method != "bootstrap" or not err.is_terminal:
        yield
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

    from aieval.stats import resample_progress

    bar = Progress(
        TextColumn("bootstrap resamples"),
        BarColumn(),
        TaskProgressColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("bootstrap", total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar, resample_progress(update):
        yield


def _emit(obj: Any, fmt: Format, output: Path | None) -> None:
    """Render ``obj`` in ``fmt`` to ``output`` (atomically) or to the terminal."""
    from aieval.report import render_html, render_json, render_markdown, render_text

    if fmt is Format.text and output is None:
        render_text(obj, console=out)
        return
    renderers: dict[Format, Callable[[Any], str]] = {
        Format.text: render_text,
        Format.json: render_json,
        Format.markdown: render_markdown,
        Format.html: render_html,
    }
    write_text(renderers[fmt.canonical()](obj), output)
    if output is not None:
        out.print(f"wrote {output}", highlight=False)
