"""The ``aieval`` command line: run evals, list and show stored runs."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from aieval._serve import serve_command
from aieval.errors import AievalError, UserError
from aieval.runner import RunResult, load_eval, run_eval
from aieval.store import RunRow, Store, default_db_path

__all__ = ["app", "main"]

app = typer.Typer(
    name="aieval",
    help="Evaluate LLM applications and agent workflows; decide whether a version ships.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
if not out.is_terminal:  # piped or logged output: do not squeeze tables into 80 columns
    out = Console(width=160)
err = Console(stderr=True)

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="SQLite store (default: $AIEVAL_DB or ./aieval.db)."),
]


@app.command("run")
def run_command(
    eval_file: Annotated[Path, typer.Argument(help="Eval file: YAML, or Python defining EVAL.")],
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="Recorded model version(s) to evaluate."),
    ] = None,
    db: DbOption = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the latest unfinished run of this eval.")
    ] = False,
    resume_id: Annotated[
        str | None, typer.Option("--resume-id", help="Finish this unfinished run id.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N rows.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Samples in flight at once.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run an evaluation and print its summary."""
    config = load_eval(eval_file)
    store = Store(db) if db else Store(default_db_path())
    resume_arg: str | bool | None = resume_id or (True if resume else None)
    with _progress(quiet) as make_callback:
        results = run_eval(
            config,
            store=store,
            resume=resume_arg,
            models=model or None,
            limit=limit,
            concurrency=concurrency,
            progress=make_callback,
        )
    for result in results:
        _print_summary(result)
    if len(results) > 1:
        _print_comparison(results)
    out.print(f"[dim]stored in {store.path}[/]")


@app.command("runs")
def runs_command(
    name: Annotated[str | None, typer.Option(help="Only runs with this name.")] = None,
    limit: Annotated[int, typer.Option(help="How many runs.")] = 20,
    db: DbOption = None,
) -> None:
    """List stored runs, most recent first."""
    store = _existing_store(db)
    rows = store.list_runs(name=name, limit=limit)
    if not rows:
        out.print("no runs stored yet")
        return
    table = Table(title=f"runs in {store.path}")
    for column in ("id", "name", "model", "status", "samples", "pass rate", "when"):
        table.add_column(column, no_wrap=column in ("id", "when"))
    for row in rows:
        metrics = row.metrics or {}
        table.add_row(
            row.id,
            row.name,
            row.model or "-",
            _status(row.status),
            str(metrics.get("samples", "-")),
            _pct(metrics.get("pass_rate")),
            _when(row.created_at),
        )
    out.print(table)


@app.command("show")
def show_command(
    run_ref: Annotated[str, typer.Argument(help="Run id, id prefix, or run name (latest).")],
    samples: Annotated[int, typer.Option(help="How many samples to list.")] = 10,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only samples that did not pass.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    db: DbOption = None,
) -> None:
    """Show a stored run: its summary and its samples."""
    store = _existing_store(db)
    row = store.get_run(run_ref)
    records = [s for s in store.iter_samples(row.id) if not failed or not s.passed]
    if as_json:
        payload = {
            "run": {k: getattr(row, k) for k in row.__dataclass_fields__},
            "samples": [_sample_dict(s) for s in records[:samples]],
        }
        out.print_json(json.dumps(payload, default=str))
        return
    _print_run_row(row)
    if "evaluation" in (row.metrics or {}):
        _print_evaluation((row.metrics or {})["evaluation"], records[:samples])
        return
    table = Table(title=f"samples ({min(samples, len(records))} of {len(records)})")
    for column in ("id", "passed", "prediction", "scores", "errors"):
        table.add_column(column, overflow="fold")
    for record in records[:samples]:
        table.add_row(
            record.id,
            "[green]yes[/]" if record.passed else "[red]no[/]",
            _clip(record.prediction or ""),
            ", ".join(f"{k}={_num(v)}" for k, v in record.values.items()),
            "; ".join(f"{k}: {v}" for k, v in record.errors.items()),
        )
    out.print(table)


def _print_evaluation(summary: dict[str, Any], records: Sequence[Any]) -> None:
    """Graded workflow runs: grade distribution, gate failure rates, and each run's verdict."""
    grades = " ".join(f"{g}:{n}" for g, n in summary.get("grades", {}).items())
    failing = {g: r for g, r in summary.get("gate_failure_rates", {}).items() if r}
    gates = ", ".join(f"{g} {_pct(r)}" for g, r in failing.items()) or "none"
    out.print(f"grades {grades} · graded pass rate {_pct(summary.get('pass_rate'))}")
    out.print(f"gate failures: {gates}")
    table = Table(title="graded runs", title_justify="left")
    for column in ("run", "grade", "passed", "score", "why"):
        table.add_column(column, overflow="fold")
    for record in records:
        ev = record.extra.get("evaluation")
        if not isinstance(ev, dict):
            continue
        why = ev["reasons"] or ev["placement"][:1]
        table.add_row(
            record.id,
            ev["grade"],
            "[green]yes[/]" if ev["passed"] else "[red]no[/]",
            "-" if ev["weighted_score"] is None else f"{ev['weighted_score']:.2f}",
            "; ".join(why),
        )
    out.print(table)


rubric_app = typer.Typer(help="Work with rubric files.", no_args_is_help=True)
app.add_typer(rubric_app, name="rubric")


@rubric_app.command("validate")
def rubric_validate_command(
    files: Annotated[list[Path], typer.Argument(help="Rubric YAML files.")],
) -> None:
    """Validate rubric files; exit 1 if any is invalid, naming file, criterion and field."""
    from aieval.grading import validate_rubric_files

    failed = 0
    for path, problem in validate_rubric_files(files):
        if problem is None:
            out.print(f"[green]ok[/]      {path}")
        else:
            failed += 1
            out.print(f"[red]invalid[/] {problem}", highlight=False)
    if failed:
        raise typer.Exit(1)


def _print_summary(result: RunResult) -> None:
    summary = result.summary
    title = f"{result.name}" + (f" · {result.model}" if result.model else "")
    table = Table(title=title, title_justify="left")
    for column in ("metric", "mean", "std", "scored", "errors"):
        table.add_column(column, justify="right" if column != "metric" else "left")
    for name, stats in summary["scorers"].items():
        table.add_row(
            name, _num(stats["mean"]), _num(stats["std"]), str(stats["count"]), str(stats["errors"])
        )
    if summary["scorers"]:
        out.print(table)
    latency = summary["latency_s"]
    parts = [
        f"run [bold]{result.id}[/]",
        _status(result.status),
        f"{summary['samples']} samples",
        f"pass rate {_pct(result.pass_rate)}",
    ]
    if summary["target_errors"]:
        parts.append(f"[red]{summary['target_errors']} target errors[/]")
    if latency["p50"] is not None:
        parts.append(f"latency p50 {latency['p50']:.2f}s p95 {latency['p95']:.2f}s")
    if summary["input_tokens"] or summary["output_tokens"]:
        parts.append(f"tokens {summary['input_tokens']}/{summary['output_tokens']}")
    parts.append(f"{result.duration_s:.2f}s")
    out.print(" · ".join(parts))
    if "evaluation" in summary:
        _print_evaluation(summary["evaluation"], result.samples)


def _print_comparison(results: Sequence[RunResult]) -> None:
    table = Table(title="comparison", title_justify="left")
    table.add_column("metric")
    for result in results:
        table.add_column(result.model or result.id, justify="right")
    names: list[str] = []
    for result in results:
        names.extend(n for n in result.metrics if n not in names)
    for name in names:
        table.add_row(name, *(_num(r.metrics.get(name)) for r in results))
    table.add_row("pass rate", *(_pct(r.pass_rate) for r in results))
    out.print(table)


def _print_run_row(row: RunRow) -> None:
    metrics = row.metrics or {}
    out.print(
        f"run [bold]{row.id}[/] · {row.name} · {row.model or '-'} · {_status(row.status)} · "
        f"{_when(row.created_at)}"
    )
    if row.error:
        out.print(f"[red]{row.error}[/]")
    scorers: dict[str, Any] = metrics.get("scorers", {})
    if scorers:
        table = Table(title_justify="left")
        for column in ("metric", "mean", "std", "scored", "errors"):
            table.add_column(column)
        for name, stats in scorers.items():
            table.add_row(
                name,
                _num(stats["mean"]),
                _num(stats["std"]),
                str(stats["count"]),
                str(stats["errors"]),
            )
        out.print(table)
        out.print(f"pass rate {_pct(metrics.get('pass_rate'))} of {metrics.get('samples')} samples")


class _progress:
    """A Rich progress bar per run, with rate and ETA; silent when not on a terminal."""

    def __init__(self, quiet: bool) -> None:
        self.enabled = not quiet and err.is_terminal
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}/s"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=False,
        )

    def __enter__(self) -> Callable[[str], Callable[[int, int], None] | None]:
        if self.enabled:
            self.bar.start()
        return self.callback

    def __exit__(self, *_: object) -> None:
        if self.enabled:
            self.bar.stop()

    def callback(self, label: str) -> Callable[[int, int], None] | None:
        if not self.enabled:
            return None
        task = self.bar.add_task(label, total=None, rate="-")

        def update(done: int, total: int) -> None:
            elapsed = self.bar.tasks[task].elapsed or 0.0
            rate = f"{done / elapsed:.0f}" if elapsed > 0 else "-"
            self.bar.update(task, completed=done, total=total, rate=rate)

        return update


def _existing_store(db: Path | None) -> Store:
    path = db or default_db_path()
    if not Path(path).exists():
        raise UserError(f"no store at {path}; run an eval first or pass --db")
    return Store(path)


def _sample_dict(record: Any) -> dict[str, Any]:
    return {
        "id": record.id,
        "input": record.input,
        "expected": record.expected,
        "prediction": record.prediction,
        "passed": record.passed,
        "scores": {
            k: {"value": v.value, "reason": v.reason, "error": v.error}
            for k, v in record.scores.items()
        },
        "error": record.error,
        "evaluation": record.extra.get("evaluation"),
    }


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _status(status: str) -> str:
    colour = {"completed": "green", "running": "yellow", "interrupted": "yellow"}.get(status, "red")
    return f"[{colour}]{status}[/]"


def _when(stamp: float) -> str:
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@app.command("calibrate")
def calibrate_command(
    run_ref: Annotated[str, typer.Argument(help="Run id, id prefix, or run name (latest).")],
    labels: Annotated[Path, typer.Argument(help="Human labels, JSONL: id + score or preference.")],
    scorer_name: Annotated[
        str | None, typer.Option("--scorer", help="The judge's scorer name in the run.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    db: DbOption = None,
) -> None:
    """Agreement of a judge with human labels (with 95% CIs), stored, and drift since last time."""
    from aieval.judges import calibrate

    store = _existing_store(db)
    row = store.get_run(run_ref)
    report = calibrate(
        list(store.iter_samples(row.id)), labels, scorer=scorer_name, store=store, run_id=row.id
    )
    if as_json:
        out.print_json(json.dumps(report.to_dict(), default=str))
        return
    title = (
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
            _num(ci.estimate),
            f"{ci.low:.3f} – {ci.high:.3f}",
            "-" if drift is None else f"{drift:+.3f}",
        )
    out.print(table)
    if report.previous is not None:
        prev = report.previous
        out.print(
            f"previous: {_when(prev.created_at)} · {prev.model or '-'} · "
            f"prompt {prev.prompt_version or '-'} · n={prev.n}"
        )
    for warning in report.warnings:
        out.print(f"[yellow]warning:[/] {warning}", highlight=False)


app.command("serve")(serve_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: user-fixable errors print one clear line and exit 2, never a traceback."""
    try:
        code = app(args=list(argv) if argv is not None else None, standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except UserError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
    except AievalError as exc:
        err.print(f"[bold red]error:[/] {type(exc).__name__}: {exc}", highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("interrupted; finish it later with [bold]aieval run EVAL --resume[/]")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors and aborts
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(1)
        raise
