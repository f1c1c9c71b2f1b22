"""``aieval run``: run an evaluation, show a progress bar, print its summary and exit codes."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from aieval._terminal import printable
from aieval.cli._exits import (
    EXIT_BELOW_MINIMUM,
    EXIT_ERRORS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
)
from aieval.cli._options import (
    RAY_EXTRA_HELP,
    DbOption,
    check_executor,
    check_ray,
    share,
    store_location,
)
from aieval.cli._print import (
    err,
    labelled,
    num,
    out,
    pct,
    print_evaluation,
    print_top_errors,
    scorer_table,
    status_text,
    usage_parts,
)
from aieval.cli._signals import Termination, sigterm_as_interrupt
from aieval.errors import StoreError, UnstorableSampleError

if TYPE_CHECKING:
    from aieval.cli._tracing import Destination
    from aieval.core import RunFinish, RunStart, SampleRecord
    from aieval.runner import EpochsSummary, RunResult
    from aieval.store import Store

__all__ = ["Interrupted", "run_command"]


class Interrupted(Exception):
    """Ctrl-C (or SIGTERM) that the command has already explained: ``main`` exits ``code``
    (130, or 143 for SIGTERM) quietly."""

    def __init__(self, code: int = EXIT_INTERRUPTED) -> None:
        super().__init__(code)
        self.code = code


_Models = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="Model to call (replaces the target's model), or recorded version to "
        "evaluate; repeat for one run per model.",
    ),
]

_MaxErrorRate = Annotated[
    float | None,
    typer.Option(
        "--max-error-rate",
        callback=share,
        help="Share of samples that may error before the run exits 3 (default: the eval"
        " file's settings.max_error_rate, else 0).",
    ),
]

_Executor = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Where samples run: local (this process) or ray (Ray workers; needs"
        f" {RAY_EXTRA_HELP}). Default: the eval file's settings.executor, else local.",
    ),
]

_RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Ray cluster for --executor ray: host:port, ray://host:10001 or auto"
        " (default: $RAY_ADDRESS, else a cluster 'ray start' runs here, else a local Ray).",
    ),
]

_Epochs = Annotated[
    int | None,
    typer.Option(
        "--epochs",
        min=1,
        max=1000,
        help="Answer and score each example N times: pass@k, pass^k and the judge's share"
        " of the variance (default: the eval file's settings.epochs, else 1).",
    ),
]

_MinPassRate = Annotated[
    float | None,
    typer.Option(
        "--min-pass-rate",
        callback=share,
        help="Least pass rate (0..1); below it the run exits 4 (default: the eval file's"
        " settings.min_pass_rate, else none).",
    ),
]


def run_command(
    eval_file: Annotated[Path, typer.Argument(help="Eval file: YAML, or Python defining EVAL.")],
    model: _Models = None,
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
    max_error_rate: _MaxErrorRate = None,
    executor: _Executor = None,
    ray_address: _RayAddress = None,
    epochs: _Epochs = None,
    min_pass_rate: _MinPassRate = None,
    replay: Annotated[
        str | None,
        typer.Option(
            "--replay",
            help="Replay the conversations of this stored run, or of a records file (a path"
            " ending in .jsonl, e.g. an import's recorded.jsonl), by scenario id and epoch.",
        ),
    ] = None,
    replay_mode: Annotated[
        str | None,
        typer.Option(
            "--replay-mode",
            help="strict: replay user turns and tool results, call the target (default); "
            "all: replay every turn, call nothing; branch: live from the first changed answer.",
        ),
    ] = None,
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print the expected calls and tokens of a conversation run, then exit "
            "without calling anything.",
        ),
    ] = False,
) -> None:
    """Run an evaluation and print its summary.

    Exit codes: 0 every run completed within its error budget; 1 a run failed (e.g. the store
    could not be written; resume it with --resume); 2 a usage or configuration error; 3 more
    samples errored than --max-error-rate allows, or a scorer scored no sample and found some
    not applicable (its values None, no error); 4 a run missed a minimum (--min-pass-rate,
    settings.min_pass_rate or settings.min; 3 wins when both apply); 130 interrupted (resume
    it with --resume); 143 stopped by SIGTERM (handled as an interruption: resume it too).
    """
    from aieval.cli._tracing import live_destination
    from aieval.runner import load_eval, plaintext_keys, run_eval, telemetry_requested
    from aieval.store import Store

    check_executor(executor)
    config = load_eval(eval_file)
    for field in plaintext_keys(config):
        _warn_plaintext_key(eval_file, field)
    check_ray(executor or config.settings.executor, ray_address)  # before the store is opened
    flags = {"concurrency": concurrency, "executor": executor, "ray_address": ray_address}
    note = _ResumeNote(eval_file, config.settings.model_fields_set, flags)
    store = Store(store_location(db))
    if estimate:
        from aieval.conversations import estimate_run

        for found in estimate_run(
            config, store=store, limit=limit, epochs=epochs, replay=replay, replay_mode=replay_mode
        ):
            for line in found.lines():
                out.print(line, markup=False, highlight=False)
        return
    resume_arg: str | bool | None = resume_id or (True if resume else None)
    destination = live_destination() if telemetry_requested(config) else None
    terminated = Termination()
    started = time.time()
    try:
        with sigterm_as_interrupt(terminated), _Progress(quiet) as make_callback:
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
                epochs=epochs,
                min_pass_rate=min_pass_rate,
                replay=replay,
                replay_mode=replay_mode,
                observers=[note] if resume_arg else (),
            )
    except KeyboardInterrupt:
        _resume_hint("interrupted;", "yellow", eval_file, db)
        raise Interrupted(EXIT_TERMINATED if terminated.received else EXIT_INTERRUPTED) from None
    except StoreError as exc:
        _error(f"the run failed: {exc}", soft_wrap=True)
        if not isinstance(exc, UnstorableSampleError):  # the store itself is fine otherwise
            since = None if resume_arg else started  # a resumed run was stored before
            _store_failure_hint(store, config.name, eval_file, db, since=since)
        raise typer.Exit(EXIT_FAILED) from None
    finally:
        if destination is not None:
            destination.provider.shutdown()
    if destination is not None:
        _warn_unexported(destination)
    for result in results:
        _print_summary(result)
        _print_judges(store, result)
    if len(results) > 1:
        _print_comparison(results)
    out.print(printable(f"stored in {store.location}"), style="dim")
    _exit_for_problems(results)


def _warn_plaintext_key(eval_file: Path, field: str) -> None:
    warning = (
        f"{eval_file}: {field} holds a key in plain text; prefer api_key_env: MY_KEY, "
        "the name of an environment variable that holds it (docs/providers.md)"
    )
    err.print(labelled("warning:", "yellow", warning), highlight=False)


def _warn_unexported(destination: Destination) -> None:
    lost = destination.outcome
    if lost is None or not lost.failed:
        return
    err.print(
        labelled(
            "telemetry:",
            "yellow",
            f"{lost.failed} of {lost.failed + lost.exported} spans were not exported "
            f"({destination.label}); the run is stored: `aieval export-otel RUN` resends it",
        ),
        soft_wrap=True,
    )


def _exit_for_problems(results: Sequence[RunResult]) -> None:
    """Name each run over its error budget, with a scorer that scored no sample, or below a
    minimum; exit 3 for the first two, else 4 for the last."""
    over = [r for r in results if r.error_budget_exceeded]
    for result in over:
        _error(
            f"run {result.id}: {result.error_count} of {result.summary.samples}"
            f" samples errored (max error rate {pct(result.max_error_rate)});"
            " see the top errors above, or allow some with --max-error-rate"
        )
    unscored = [r for r in results if r.unscored_scorers]
    for result in unscored:
        names = ", ".join(repr(name) for name in result.unscored_scorers)
        _error(
            f"run {result.id}: scorer {names} scored no sample of {result.scored_samples}"
            " (n/a or failed on every one); see the n/a and errors columns above"
        )
    below = [r for r in results if r.missed_minimums]
    for result in below:
        missed = "; ".join(str(m) for m in result.missed_minimums)
        _error(f"run {result.id} missed its minimums: {missed}", soft_wrap=True)
    if over or unscored:
        raise typer.Exit(EXIT_ERRORS)
    if below:
        raise typer.Exit(EXIT_BELOW_MINIMUM)


def _error(text: str, *, soft_wrap: bool | None = None) -> None:
    err.print(labelled("error:", "bold red", text), highlight=False, soft_wrap=soft_wrap)


class _ResumeNote:
    """Says, as a resumed run starts, each execution setting it uses that differs from the one
    it ran with before, and where the setting came from (a flag, the eval file, the default)."""

    def __init__(self, eval_file: Path, in_file: set[str], flags: dict[str, Any]) -> None:
        self.eval_file = eval_file
        self.in_file = in_file
        self.flags = {name: value for name, value in flags.items() if value is not None}

    def on_start(self, run: RunStart) -> None:
        if not run.execution_changes:
            return
        shown = "; ".join(
            f"{c.field} {c.now} (from {self._source(c.field)}; the run ran with {c.then} before)"
            for c in run.execution_changes
        )
        err.print(
            labelled("resuming:", "yellow", f"run {run.id} with {shown}"),
            highlight=False,
            soft_wrap=True,
        )

    def _source(self, name: str) -> str:
        if name in self.flags:
            return "--" + name.replace("_", "-")
        return str(self.eval_file) if name in self.in_file else "the default"

    def on_sample(self, run: RunStart, sample: SampleRecord, done: int, total: int) -> None:
        pass

    def on_finish(self, run: RunStart, end: RunFinish) -> None:
        pass


def _store_failure_hint(
    store: Store, name: str, eval_file: Path, db: str | None, *, since: float | None
) -> None:
    """How to go on after the store failed: resume the stored run, or run again when none was.
    ``since``: when this command started, so that an older unfinished run of the same name is
    not taken for this one (``None``: resuming, the run was stored before)."""
    once = (
        "once the store is writable again (free space...),"
        if store.location.is_sqlite
        else "once the store is reachable and writable again,"
    )
    try:
        latest = store.latest_unfinished(name)
        stored = latest is not None and (since is None or latest.created_at >= since)
    except StoreError:  # unreadable now: whether the run was stored is unknown
        _resume_hint(f"{once} if `aieval runs` lists the run,", "red", eval_file, db)
        return
    if stored:
        _resume_hint(once, "red", eval_file, db)
    else:
        err.print(
            Text(f"nothing of the run was stored: {once} run it again", "red"), soft_wrap=True
        )


def _resume_hint(lead: str, style: str, eval_file: Path, db: str | None) -> None:
    location = store_location(db) if db else None
    # quoted for a shell: a URL's "&" or a path's space would otherwise break the pasted command
    command = f"aieval run {shlex.quote(str(eval_file))} --resume" + (
        f" --db {shlex.quote(str(location))}" if location else ""
    )
    # the hint shows the URL's password as ***: pasted as is, libpq needs it from elsewhere (a
    # shell comment, so that the whole line still pastes)
    where = "  # give the password through PGPASSWORD or ~/.pgpass"
    note = where if location is not None and location.has_password else ""
    err.print(
        Text.assemble((lead, style), " resume with ", (command, "bold"), note), soft_wrap=True
    )


def _print_summary(result: RunResult) -> None:
    summary = result.summary
    title = printable(f"{result.name}" + (f" · {result.model}" if result.model else ""))
    if summary.scorers:
        out.print(scorer_table(summary.scorers, title=title, numbers_right=True))
    status = status_text(result.status)
    if result.error_budget_exceeded:
        status = Text(f"{result.status} with errors", style="red")
    elif result.unscored_scorers:  # named beside the pass rate: which scored nothing
        many = len(result.unscored_scorers) > 1
        status = Text(
            f"{result.status} with {'scorers' if many else 'a scorer'} that scored nothing",
            style="red",
        )
    elif result.missed_minimums:
        status = Text(f"{result.status} below its minimums", style="red")
    parts: list[str | Text] = [
        Text.assemble("run ", (printable(result.id), "bold")),
        status,
        f"{summary.samples} samples",
        # a rate of a run that checked nothing would read as "all passed"
        f"pass rate {pct(result.pass_rate)}" if summary.scorers else "no checks: nothing scored",
    ]
    from aieval.core import coverage_note  # not at import: `--help` loads no core

    note = coverage_note(result.low_coverage)
    if note:  # right beside the rate, which counts none of these scorers' samples
        parts[-1] = Text.assemble(parts[-1], (printable(note), "yellow"))
    if summary.unscored:
        parts.append(Text(f"{summary.unscored} unscored samples", style="yellow"))
    if summary.invalid:  # neither passed nor failed: a simulated user that failed fidelity
        left_out = f"{summary.invalid} invalid (simulated user), left out of the pass rate"
        parts.append(Text(left_out, style="yellow"))
    if summary.target_errors:
        parts.append(Text(f"{summary.target_errors} target errors", style="red"))
    if result.error_count:
        parts.append(Text(f"{result.error_count} errored samples", style="red"))
    parts.extend(usage_parts(summary))
    parts.append(f"{result.duration_s:.2f}s")
    out.print(Text(" · ").join(Text(p) if isinstance(p, str) else p for p in parts))
    _print_epochs(summary.epochs)
    _print_minimums(result)
    _print_malformed(result)
    print_top_errors(summary)
    if summary.evaluation is not None:
        print_evaluation(summary.evaluation, result.samples)


def _print_judges(store: Store, result: RunResult) -> None:
    """The run's judges against the store's review labels, as its report shows them."""
    from aieval.report import render_judges, run_judge_figures

    figures = run_judge_figures(store, store.get_run(result.id))
    if figures is not None:
        render_judges(figures.to_dict(), console=out)


def _print_epochs(epochs: EpochsSummary | None) -> None:
    """pass@k and pass^k by k, and each judged scorer's variance split, of a run of epochs."""
    if epochs is None:
        return
    line = " · ".join(
        f"k={k}: pass@k {pct(at)} pass^k {pct(epochs.pass_hat_k.get(k))}"
        for k, at in epochs.pass_at_k.items()
    )
    from aieval.report import invalid_answers_note

    left_out = invalid_answers_note(epochs.invalid, epochs.invalid_examples)
    out.print(
        f"epochs {epochs.n} ({epochs.complete} of {epochs.examples} examples complete) · {line}"
        + left_out
    )
    for name, split in epochs.variance.items():
        share = split["answer_share"]
        shown = (
            f"{pct(share)} from the answers, {pct(1 - share)} from the judge"
            if share is not None
            else "answers and judge not separable (the judge needs samples >= 2, the run"
            " epochs >= 2)"
        )
        out.print(printable(f"{name}: variance {shown}"))


def _print_minimums(result: RunResult) -> None:
    """Each minimum the run was held to, with its value: met (green) or missed (red)."""
    minimums = result.summary.minimums
    if minimums is None:
        return
    parts = [
        Text(
            printable(f"{check.metric} {num(check.value)} (min {check.minimum:g})"),
            style="green" if check.met else "red",
        )
        for check in minimums.checks
    ]
    out.print(Text("minimums: ").append(Text(" · ").join(parts)))


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


def _print_comparison(results: Sequence[RunResult]) -> None:
    from rich.table import Table

    table = Table(title="comparison", title_justify="left")
    table.add_column("metric")
    for result in results:
        table.add_column(printable(result.model or result.id), justify="right")
    names: list[str] = []
    for result in results:
        names.extend(n for n in result.metrics if n not in names)
    uneven = False
    for name in names:
        scored = [_scored(r, name) for r in results]
        cells = [num(r.metrics.get(name)) for r in results]
        if len(set(scored)) > 1:  # one column's mean leaves out samples the other's covers
            uneven = True
            cells = [f"{cell} (n={n or 0})" for cell, n in zip(cells, scored, strict=True)]
        table.add_row(printable(name), *cells)
    samples = [r.summary.samples for r in results]
    rates = [pct(r.pass_rate) for r in results]
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


def _scored(result: RunResult, name: str) -> int | None:
    """The samples a scorer scored in a run (``None``: the run has no such scorer)."""
    stats = result.summary.scorers.get(name)
    return None if stats is None else stats.count


class _Progress:
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
