"""``aieval calibrate`` and ``aieval rubric validate``: a judge against human labels, and rubric
files checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._options import DbOption, RunRef, existing_store
from aieval.cli._print import labelled, num, out, when

__all__ = ["calibrate_command", "rubric_app"]


def calibrate_command(
    run_ref: RunRef,
    labels: Annotated[Path, typer.Argument(help="Human labels, JSONL: id + score or preference.")],
    scorer_name: Annotated[
        str | None, typer.Option("--scorer", help="The judge's scorer name in the run.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    db: DbOption = None,
) -> None:
    """Agreement of a judge with human labels (with 95% CIs), stored, and drift since last time."""
    from aieval.judges import calibrate

    store = existing_store(db)
    row = store.get_run(run_ref)
    report = calibrate(
        list(store.iter_samples(row.id)), labels, scorer=scorer_name, store=store, run_id=row.id
    )
    if as_json:
        out.print_json(json.dumps(report.to_dict(), default=str), ensure_ascii=True)
        return
    title = printable(
        f"{report.judge} · {report.model or '-'} · prompt {report.prompt_version or '-'} · "
        f"n={report.n}"
    )
    table = Table(title=title, title_justify="left")
    for column in ("metric", "estimate", "95% CI", "drift"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for metric, ci in report.metrics.items():
        drift = report.drift.get(metric)
        table.add_row(
            metric,
            num(ci.estimate),
            f"{ci.low:.3f} – {ci.high:.3f}",
            "-" if drift is None else f"{drift:+.3f}",
        )
    out.print(table)
    if report.previous is not None:
        prev = report.previous
        out.print(
            f"previous: {when(prev.created_at)} · {prev.model or '-'} · "
            f"prompt {prev.prompt_version or '-'} · n={prev.n}"
        )
    for warning in report.warnings:
        out.print(labelled("warning:", "yellow", warning), highlight=False)


rubric_app = typer.Typer(cls=HelpGroup, help="Work with rubric files.", no_args_is_help=False)


@rubric_app.command("validate", cls=HelpCommand)
def rubric_validate_command(
    files: Annotated[list[Path], typer.Argument(help="Rubric YAML files.")],
) -> None:
    """Validate rubric files; exit 1 if any is invalid, naming file, criterion and field."""
    from aieval.grading import validate_rubric_files

    failed = 0
    for path, problem in validate_rubric_files(files):
        if problem is None:
            out.print(Text.assemble(("ok     ", "green"), " ", printable(str(path))))
        else:
            failed += 1
            out.print(labelled("invalid", "red", problem), highlight=False)
    if failed:
        raise typer.Exit(1)
