"""The ``aieval`` command line: run evals, list and show stored runs, report and compare them."""

from __future__ import annotations

import datetime as dt
import enum
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from aieval import _usage
from aieval._serve import serve_command
from aieval._terminal import printable, printable_lines
from aieval._usage import EXIT_ERRORS, EXIT_FAILED, EXIT_INTERRUPTED, RAY_EXTRA_HELP
from aieval._usage_figures import format_cache, format_cost, format_tokens
from aieval.errors import AievalError, StoreError, UserError
from aieval.store import RunRow, Store, default_db_path

if TYPE_CHECKING:
    from aieval.report import PromotionPolicy
    from aieval.runner import RunResult

__all__ = ["app", "main"]

app = typer.Typer(
    name="aieval",
    help="Evaluate LLM applications and agent workflows; decide whether a version ships.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Run names, sample ids, predictions and error messages come from users and models: no console
# ever reads them as Rich markup (a "[/]" in a model's answer must print, not crash). Colour is
# given explicitly, as styled Text.
out = Console(markup=False)
if not out.is_terminal:  # piped or logged output: do not squeeze tables into 80 columns
    out = Console(width=160, markup=False)
err = Console(stderr=True, markup=False)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the installed aieval version and exit.",
            is_eager=True,
            callback=_usage.print_version,
        ),
    ] = False,
) -> None:
    """Evaluate LLM applications and agent workflows; decide whether a version ships."""


DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="SQLite store (default: $AIEVAL_DB or ./aieval.db)."),
]


@app.command("run")
def run_command(
    eval_file: Annotated[Path, typer.Argument(help="Eval file: YAML, or Python defining EVAL.")],
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Model to call (replaces the target's model), or recorded version to "
            "evaluate; repeat for one run per model.",
        ),
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
    max_error_rate: Annotated[
        float | None,
        typer.Option(
            "--max-error-rate",
            callback=lambda value: _share(value),
            help="Share of samples that may error before the run exits 3 (default: the eval"
            " file's settings.max_error_rate, else 0).",
        ),
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option(
            "--executor",
            help="Where samples run: local (this process) or ray (Ray workers; needs"
            f" {RAY_EXTRA_HELP}). Default: the eval file's settings.executor, else local.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="Ray cluster for --executor ray: host:port, ray://host:10001 or auto"
            " (default: $RAY_ADDRESS, else a cluster 'ray start' runs here, else a local Ray).",
        ),
    ] = None,
) -> None:
    """Run an evaluation and print its summary.

    Exit codes: 0 every run completed within its error budget; 1 a run failed (e.g. the store
    could not be written; resume it with --resume); 2 a usage or configuration error; 3 more
    samples errored than --max-error-rate allows, or a scorer scored no sample and found some
    not applicable (its values None, no error); 130 interrupted (resume it with --resume).
    """
    from aieval.runner import load_eval, plaintext_keys, run_eval, telemetry_requested
    from aieval.runner._inputs import EXECUTORS

    if executor is not None and executor not in EXECUTORS:
        raise UserError(f"--executor: unknown executor {executor!r}; use {' or '.join(EXECUTORS)}")
    config = load_eval(eval_file)
    for field in plaintext_keys(config):
        warning = (
            f"{eval_file}: {field} holds a key in plain text; prefer api_key_env: MY_KEY, "
            "the name of an environment variable that holds it (docs/providers.md)"
        )
        err.print(_labelled("warning:", "yellow", warning), highlight=False)
    if (executor or config.settings.executor) == "ray":
        from aieval.runner._ray import import_ray

        import_ray()  # the install hint before the store is opened
    elif ray_address is not None:
        raise UserError("--ray-address applies to the Ray executor only; add --executor ray")
    store = Store(db) if db else Store(default_db_path())
    resume_arg: str | bool | None = resume_id or (True if resume else None)
    destination = _live_destination() if telemetry_requested(config) else None
    try:
        with _progress(quiet) as make_callback:
            results = run_eval(
                config,
                store=store,
                resume=resume_arg,
                models=model or None,
                limit=limit,
                concurrency=concurrency,
                progress=make_callback,
                tracer_provider=destination.provider if destination else None,
                max_error_rate=max_error_rate,
                executor=executor,
                ray_address=ray_address,
            )
    except KeyboardInterrupt:
        _resume_hint("interrupted;", "yellow", eval_file, db)
        raise _Interrupted from None
    except StoreError as exc:
        err.print(_labelled("error:", "bold red", f"the run failed: {exc}"), highlight=False)
        _resume_hint("once the store is writable again (free space...),", "red", eval_file, db)
        raise typer.Exit(EXIT_FAILED) from None
    finally:
        if destination is not None:
            destination.provider.shutdown()
    if destination is not None and destination.outcome is not None and destination.outcome.failed:
        lost = destination.outcome
        err.print(
            _labelled(
                "telemetry:",
                "yellow",
                f"{lost.failed} of {lost.failed + lost.exported} spans were not exported "
                f"({destination.label}); the run is stored: `aieval export-otel RUN` resends it",
            ),
            soft_wrap=True,
        )
    for result in results:
        _print_summary(result)
    if len(results) > 1:
        _print_comparison(results)
    out.print(printable(f"stored in {store.path}"), style="dim")
    over = [r for r in results if r.error_budget_exceeded]
    if over:
        for result in over:
            err.print(
                _labelled(
                    "error:",
                    "bold red",
                    f"run {result.id}: {result.error_count} of {result.summary['samples']}"
                    f" samples errored (max error rate {_pct(result.max_error_rate)});"
                    " see the top errors above, or allow some with --max-error-rate",
                ),
                highlight=False,
            )
    unscored = [r for r in results if r.unscored_scorers]
    for result in unscored:
        names = ", ".join(repr(name) for name in result.unscored_scorers)
        err.print(
            _labelled(
                "error:",
                "bold red",
                f"run {result.id}: scorer {names} scored no sample of {result.summary['samples']}"
                " (n/a or failed on every one); see the n/a and errors columns above",
            ),
            highlight=False,
        )
    if over or unscored:
        raise typer.Exit(EXIT_ERRORS)


def _with_counts(row: RunRow, store: Store) -> dict[str, Any]:
    """The run's stored summary; one stored before n/a was counted apart gets its per-scorer
    counts again from its samples (the same data: a None value without an error is n/a)."""
    metrics = dict(row.metrics or {})
    scorers = metrics.get("scorers")
    if isinstance(scorers, dict) and any(
        isinstance(s, dict) and "not_applicable" not in s for s in scorers.values()
    ):
        from aieval.runner._result import Aggregator

        tally = Aggregator(list(scorers))
        for sample in store.iter_samples(row.id):
            tally.add(sample)
        metrics["scorers"] = tally.summary()["scorers"]
    return metrics


def _not_applicable(stats: dict[str, Any]) -> str:
    """A scorer's n/a count; "-" for a stored summary from before n/a was counted apart."""
    value = stats.get("not_applicable")
    return "-" if value is None else str(value)


class _Interrupted(Exception):
    """Ctrl-C that the command has already explained: :func:`main` exits 130 quietly."""


def _resume_hint(lead: str, style: str, eval_file: Path, db: Path | None) -> None:
    command = f"aieval run {eval_file} --resume" + (f" --db {db}" if db else "")
    err.print(Text.assemble((lead, style), " resume with ", (command, "bold")), soft_wrap=True)


def _live_destination() -> Any:
    """Spans of ``aieval run`` go to the global provider if one is set, else OTLP or console."""
    from aieval.telemetry._exporters import cli_tracer_provider, global_provider_is_set
    from aieval.telemetry._spans import require_otel

    require_otel()
    if global_provider_is_set():
        return None
    destination = cli_tracer_provider()
    if destination.hint:
        err.print(_labelled("telemetry:", "yellow", destination.hint), soft_wrap=True)
    return destination


@app.command("export-otel")
def export_otel_command(
    run_ref: Annotated[str, typer.Argument(help="Run id, id prefix, or run name (latest).")],
    endpoint: Annotated[
        str | None,
        typer.Option(help="OTLP collector URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT)."),
    ] = None,
    console: Annotated[
        bool, typer.Option("--console", help="Print the spans instead of sending them.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Send a stored run to OpenTelemetry as spans: run, samples, model calls."""
    from aieval.telemetry import export_run
    from aieval.telemetry._exporters import cli_tracer_provider

    store = _existing_store(db)
    row = store.get_run(run_ref)
    destination = cli_tracer_provider(endpoint=endpoint, console=console)
    if destination.hint:
        err.print(_labelled("telemetry:", "yellow", destination.hint), soft_wrap=True)
    try:
        count = export_run(store, row.id, destination.provider)
    finally:
        destination.provider.shutdown()
    outcome = destination.outcome
    if outcome is not None and outcome.failed:
        # the exporter logs why (connection refused, HTTP status); the command must not say
        # it exported what the collector never received
        err.print(
            _labelled(
                "error:",
                "red",
                f"run {printable(row.id)}: {outcome.failed} of "
                f"{outcome.failed + outcome.exported} spans were not exported "
                f"({destination.label}); is the collector reachable at the endpoint?",
            ),
            soft_wrap=True,
        )
        raise typer.Exit(1)
    err.print(
        f"exported run {printable(row.id)}: 1 run span and {count} sample spans "
        f"({destination.label})",
        highlight=False,
        soft_wrap=True,
    )


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
    table = Table(title=printable(f"runs in {store.path}"))
    for column in ("id", "name", "model", "status", "samples", "pass rate", "when"):
        table.add_column(column, no_wrap=column in ("id", "when"))
    for row in rows:
        metrics = row.metrics or {}
        table.add_row(
            printable(row.id),
            printable(row.name),
            printable(row.model or "-"),
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
    full: Annotated[
        bool, typer.Option("--full", help="Print inputs, answers and reasons uncut.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Show a stored run: its summary and its samples (input, expected answer, prediction, and
    each scorer's value and reason; long texts are cut unless --full)."""
    from aieval._show import print_samples

    store = _existing_store(db)
    row = store.get_run(run_ref)
    records = [s for s in store.iter_samples(row.id) if not failed or not s.passed]
    if as_json:
        payload = {
            "run": {k: getattr(row, k) for k in row.__dataclass_fields__},
            "samples": [_sample_dict(s) for s in records[:samples]],
        }
        out.print_json(json.dumps(payload, default=str), ensure_ascii=True)  # no raw controls
        return
    _print_run_row(row, store)
    if "evaluation" in (row.metrics or {}):
        _print_evaluation((row.metrics or {})["evaluation"], records[:samples])
    print_samples(out, records[:samples], len(records), full=full)


def _print_evaluation(summary: dict[str, Any], records: Sequence[Any]) -> None:
    """Graded workflow runs: grade distribution, gate failure rates, and each run's verdict."""
    grades = " ".join(f"{g}:{n}" for g, n in summary.get("grades", {}).items())
    failing = {g: r for g, r in summary.get("gate_failure_rates", {}).items() if r}
    gates = ", ".join(f"{g} {_pct(r)}" for g, r in failing.items()) or "none"
    out.print(f"grades {grades} · graded pass rate {_pct(summary.get('pass_rate'))}")
    out.print(f"gate failures: {printable(gates)}")
    table = Table(title="graded runs", title_justify="left")
    for column in ("run", "grade", "passed", "score", "why"):
        table.add_column(column, overflow="fold")
    for record in records:
        ev = record.extra.get("evaluation")
        if not isinstance(ev, dict):
            continue
        why = ev["reasons"] or ev["placement"][:1]
        table.add_row(
            printable(record.id),
            printable(ev["grade"]),
            _yes_no(ev["passed"]),
            "-" if ev["weighted_score"] is None else f"{ev['weighted_score']:.2f}",
            printable("; ".join(why)),
        )
    out.print(table)


rubric_app = typer.Typer(help="Work with rubric files.", no_args_is_help=False)
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
            out.print(Text.assemble(("ok     ", "green"), " ", printable(str(path))))
        else:
            failed += 1
            out.print(_labelled("invalid", "red", problem), highlight=False)
    if failed:
        raise typer.Exit(1)


def _share(value: float | None) -> float | None:
    """A share option: a number from 0 to 1 (NaN is no number: it compares false with both)."""
    if value is not None and not 0.0 <= value <= 1.0:
        raise typer.BadParameter(f"must be a number between 0 and 1, got {value!r}")
    return value


def _print_summary(result: RunResult) -> None:
    summary = result.summary
    title = printable(f"{result.name}" + (f" · {result.model}" if result.model else ""))
    table = Table(title=title, title_justify="left")
    for column in ("metric", "mean", "std", "scored", "errors", "n/a"):
        table.add_column(column, justify="right" if column != "metric" else "left")
    for name, stats in summary["scorers"].items():
        table.add_row(
            printable(name),
            _num(stats["mean"]),
            _num(stats["std"]),
            str(stats["count"]),
            str(stats["errors"]),
            _not_applicable(stats),
        )
    if summary["scorers"]:
        out.print(table)
    status = _status(result.status)
    if result.error_budget_exceeded:
        status = Text(f"{result.status} with errors", style="red")
    elif result.unscored_scorers:
        status = Text(f"{result.status} with nothing scored", style="red")
    parts: list[str | Text] = [
        Text.assemble("run ", (printable(result.id), "bold")),
        status,
        f"{summary['samples']} samples",
        f"pass rate {_pct(result.pass_rate)}",
    ]
    if summary.get("unscored"):
        parts.append(Text(f"{summary['unscored']} unscored samples", style="yellow"))
    if summary["target_errors"]:
        parts.append(Text(f"{summary['target_errors']} target errors", style="red"))
    if result.error_count:
        parts.append(Text(f"{result.error_count} errored samples", style="red"))
    parts.extend(_usage_parts(summary))
    parts.append(f"{result.duration_s:.2f}s")
    out.print(Text(" · ").join(Text(p) if isinstance(p, str) else p for p in parts))
    _print_malformed(result)
    _print_top_errors(summary)
    if "evaluation" in summary:
        _print_evaluation(summary["evaluation"], result.samples)


def _usage_parts(summary: dict[str, Any]) -> list[str]:
    """Latency, tokens (target, judges, total), cost (``-``: unknown) and cache share."""
    parts = []
    latency = summary.get("latency_s") or {}
    if latency.get("p50") is not None:
        parts.append(f"latency p50 {latency['p50']:.2f}s p95 {latency['p95']:.2f}s")
    if summary.get("input_tokens") or summary.get("output_tokens"):
        old = {"input": summary.get("input_tokens"), "output": summary.get("output_tokens")}
        parts.append(format_tokens(summary.get("tokens") or old))
    if summary.get("cost") is not None or summary.get("unpriced_samples"):
        parts.append(f"cost {format_cost(summary.get('cost'))}")
    cache = format_cache(summary.get("cache"))
    if cache:
        parts.append(cache)
    return parts


def _print_malformed(result: RunResult) -> None:
    """A warning per judge whose verdicts could not be read on some samples."""
    for name, (bad, judged) in result.malformed.items():
        if bad:
            out.print(
                printable(
                    f"warning: {name}: {bad} of {judged} samples ({bad / judged:.0%}) had a "
                    "malformed judge verdict: scored 0.0 (a tie for a pairwise judge), "
                    "flagged and counted as errors; check the judge's output format"
                ),
                style="yellow",
            )


def _print_top_errors(summary: dict[str, Any]) -> None:
    """The most frequent error messages of a run, with how many samples each hit."""
    top = summary.get("top_errors") or []
    if top:
        out.print("top errors:", style="red")
    for entry in top:
        out.print(Text.assemble((f"  {entry['count']:>5} × ", "red"), printable(entry["message"])))


def _print_comparison(results: Sequence[RunResult]) -> None:
    table = Table(title="comparison", title_justify="left")
    table.add_column("metric")
    for result in results:
        table.add_column(printable(result.model or result.id), justify="right")
    names: list[str] = []
    for result in results:
        names.extend(n for n in result.metrics if n not in names)
    uneven = False
    for name in names:
        scored = [(r.summary["scorers"].get(name) or {}).get("count") for r in results]
        cells = [_num(r.metrics.get(name)) for r in results]
        if len(set(scored)) > 1:  # one column's mean leaves out samples the other's covers
            uneven = True
            cells = [f"{cell} (n={n or 0})" for cell, n in zip(cells, scored, strict=True)]
        table.add_row(printable(name), *cells)
    samples = [r.summary.get("samples") for r in results]
    rates = [_pct(r.pass_rate) for r in results]
    if len(set(samples)) > 1:
        uneven = True
        rates = [f"{rate} (n={n or 0})" for rate, n in zip(rates, samples, strict=True)]
    table.add_row("pass rate", *rates)
    out.print(table)
    if uneven:
        out.print(
            "n: the columns cover different numbers of samples (a sample whose target or scorer "
            "failed has no score), so those means are not over the same samples",
            style="yellow",
        )


def _print_run_row(row: RunRow, store: Store) -> None:
    metrics = _with_counts(row, store)
    out.print(
        Text.assemble(
            "run ",
            (printable(row.id), "bold"),
            printable(f" · {row.name} · {row.model or '-'} · "),
            _status(row.status),
            f" · {_when(row.created_at)}",
        )
    )
    if row.error:
        out.print(printable_lines(row.error), style="red")
    scorers: dict[str, Any] = metrics.get("scorers", {})
    if scorers:
        table = Table(title_justify="left")
        for column in ("metric", "mean", "std", "scored", "errors", "n/a"):
            table.add_column(column)
        for name, stats in scorers.items():
            table.add_row(
                printable(name),
                _num(stats["mean"]),
                _num(stats["std"]),
                str(stats["count"]),
                str(stats["errors"]),
                _not_applicable(stats),
            )
        out.print(table)
        out.print(f"pass rate {_pct(metrics.get('pass_rate'))} of {metrics.get('samples')} samples")
    usage = _usage_parts(metrics)
    if usage:
        out.print(printable(" · ".join(usage)), highlight=False)
    _print_top_errors(metrics)


class _progress:
    """A Rich progress bar per run, with rate and ETA; silent when not on a terminal."""

    def __init__(self, quiet: bool) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.enabled = not quiet and err.is_terminal
        self.bar = Progress(
            TextColumn("{task.description}", markup=False),
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
        task = self.bar.add_task(printable(label), total=None, rate="-")

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


def _status(status: str) -> Text:
    colour = {"completed": "green", "running": "yellow", "interrupted": "yellow"}.get(status, "red")
    return Text(status, style=colour)


def _yes_no(passed: bool | None) -> Text:
    return Text("yes", style="green") if passed else Text("no", style="red")


def _labelled(label: str, style: str, message: str) -> Text:
    """``label message`` with only the label coloured; the message is plain text, escaped line
    by line (a message of several lines keeps its line breaks)."""
    return Text.assemble((label, style), " ", printable_lines(message))


def _when(stamp: float) -> str:
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


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
        out.print(_labelled("warning:", "yellow", warning), highlight=False)


class Format(enum.StrEnum):
    """Output formats of ``report`` and ``compare``."""

    text = "text"
    json = "json"
    md = "md"
    html = "html"


FormatOption = Annotated[
    Format, typer.Option("--format", "-f", help="text (terminal), json, md (PR comment) or html.")
]
OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
]


@app.command("report")
def report_command(
    run_ref: Annotated[str, typer.Argument(help="Run id, id prefix, or run name (latest).")],
    db: DbOption = None,
    fmt: FormatOption = Format.text,
    output: OutputOption = None,
    slice_by: Annotated[
        list[str] | None,
        typer.Option("--slice", help="Break results down by this metadata field (repeatable)."),
    ] = None,
) -> None:
    """Report a stored run: pass rate and weighted score with CIs, grades, gates, criteria."""
    from aieval.report import build_report

    report = build_report(_existing_store(db), run_ref, slice_by=slice_by or ())
    _emit(report, fmt, output)


@app.command("compare")
def compare_command(
    baseline: Annotated[str, typer.Argument(help="Baseline run id, or name (latest other run).")],
    candidate: Annotated[str, typer.Argument(help="Candidate run id, or name (latest).")],
    db: DbOption = None,
    fmt: FormatOption = Format.text,
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
) -> None:
    """Compare a candidate run with its baseline and decide whether it may replace it.

    Exit codes: 0 promote (every rule holds), 1 blocked (a regression shown or a rule broken),
    3 inconclusive (nothing failed, but the data cannot show the candidate is not worse: too
    few examples, or a margin too tight for them; CI should treat it as not promoting),
    2 usage error (such as an unknown run).
    """
    from aieval.report import compare_runs

    policy = _policy(policy_file, margin=margin, alpha=alpha, gate_tolerance=gate_tolerance)
    comparison = compare_runs(_existing_store(db), baseline, candidate, policy=policy)
    data = comparison.to_dict()
    decision = data["decision"]
    if output is not None or fmt is not Format.text:
        # the verdict is always visible, even when the document goes to a file or a pipe
        colour = {"promote": "green", "inconclusive": "yellow"}.get(comparison.outcome, "red")
        console = out if output is not None else err
        console.print(decision["summary"], style=f"bold {colour}", highlight=False)
    _emit(data, fmt, output)
    if comparison.decision.exit_code:
        raise typer.Exit(comparison.decision.exit_code)


@app.command("diff")
def diff_command(
    baseline: Annotated[str, typer.Argument(help="Baseline run id, or name (latest other run).")],
    candidate: Annotated[str, typer.Argument(help="Candidate run id, or name (latest).")],
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
    from aieval._show import print_diff_samples
    from aieval.report import compare_runs, render_diff

    store = _existing_store(db)
    comparison = compare_runs(store, baseline, candidate, max_examples=None).to_dict()
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


schema_app = typer.Typer(help="Print the published JSON Schemas.", no_args_is_help=False)
app.add_typer(schema_app, name="schema")


@schema_app.command("report")
def schema_report_command() -> None:
    """The JSON Schema (draft 2020-12) of `aieval report --format json`."""
    from aieval.report import report_schema

    sys.stdout.write(json.dumps(report_schema(), indent=2) + "\n")


@schema_app.command("comparison")
def schema_comparison_command() -> None:
    """The JSON Schema (draft 2020-12) of `aieval compare --format json`."""
    from aieval.report import comparison_schema

    sys.stdout.write(json.dumps(comparison_schema(), indent=2) + "\n")


def _policy(
    path: Path | None, *, margin: float | None, alpha: float | None, gate_tolerance: float | None
) -> PromotionPolicy:
    """The promotion policy: the file's (or the defaults), then the command-line overrides."""
    from aieval.report import PromotionPolicy

    base = PromotionPolicy.from_file(path) if path is not None else PromotionPolicy()
    overrides = {
        "noninferiority_margin": margin,
        "alpha": alpha,
        "gate_failure_tolerance": gate_tolerance,
    }
    data = {**base.to_dict(), **{k: v for k, v in overrides.items() if v is not None}}
    return PromotionPolicy.from_mapping(data, source="command-line options")


def _emit(obj: Any, fmt: Format, output: Path | None) -> None:
    """Render ``obj`` in ``fmt`` to ``output`` (atomically) or to the terminal."""
    from aieval.report import render_html, render_json, render_markdown, render_text

    if fmt is Format.text and output is None:
        render_text(obj, console=out)
        return
    renderers: dict[Format, Callable[[Any], str]] = {
        Format.text: render_text,
        Format.json: render_json,
        Format.md: render_markdown,
        Format.html: render_html,
    }
    text = renderers[fmt](obj)
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    _write_atomic(output, text)
    out.print(f"wrote {output}", highlight=False)


def _write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, so readers never see half a report."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared report from its readers
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


app.command("serve")(serve_command)

# --- code evaluation (aieval.code) ---------------------------------------------------------------
from aieval.code._cli import code_command, code_report_command  # noqa: E402

app.command("code")(code_command)
app.command("code-report")(code_report_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: user-fixable errors print one clear line and exit 2, never a traceback."""
    try:
        code = app(args=list(argv) if argv is not None else None, standalone_mode=False)
        if code == EXIT_INTERRUPTED:
            # typer's exit for a Ctrl-C outside a command's own handling (before a run starts)
            err.print("interrupted", highlight=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except UserError as exc:
        # soft_wrap: a long message (a file path) stays one line in a log or a pipe
        err.print(_labelled("error:", "bold red", str(exc)), highlight=False, soft_wrap=True)
        sys.exit(2)
    except AievalError as exc:
        message = f"{type(exc).__name__}: {exc}"
        err.print(_labelled("error:", "bold red", message), highlight=False, soft_wrap=True)
        sys.exit(1)
    except _Interrupted:
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        err.print(
            Text.assemble(
                "interrupted; finish it later with ", ("aieval run EVAL --resume", "bold")
            )
        )
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors and aborts, from typer's own click or click
        if not _usage.handle(exc, err):
            raise
