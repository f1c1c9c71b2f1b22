"""``aieval code`` and ``aieval code-report``: a code evaluation from the command line."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from aieval._terminal import printable
from aieval.cli._exits import EXIT_ERRORS
from aieval.cli._options import (
    RAY_EXTRA_HELP,
    DbOption,
    Format,
    FormatOption,
    OutputOption,
    RunRef,
    check_executor,
    check_ray,
    existing_store_path,
    store_location,
    write_text,
)
from aieval.errors import ConfigError

if TYPE_CHECKING:
    from aieval.runner import RunResult

__all__ = ["code_command", "code_report_command"]

_DEFAULTS: dict[str, Any] = {
    "name": "code",
    "n": 1,
    "k": [1],
    "workers": 4,
    "canonical": False,
    "allow_code_execution": False,
}


def code_command(
    problems: Annotated[
        Path,
        typer.Argument(help="Problems JSONL (.jsonl, .jsonl.gz), or a 'task: code' eval file."),
    ],
    n: Annotated[int, typer.Option("--n", help="Completions per problem.")] = 1,
    k: Annotated[str, typer.Option("--k", help="pass@k values, comma-separated.")] = "1",
    provider: Annotated[str | None, typer.Option(help="Provider that generates.")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model name.")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    completions: Annotated[
        Path | None, typer.Option(help="Recorded completions JSONL (task_id, completion).")
    ] = None,
    canonical: Annotated[
        bool, typer.Option("--canonical", help="Execute each problem's canonical_solution.")
    ] = False,
    workers: Annotated[int, typer.Option(help="Executions in flight at once.")] = 4,
    timeout: Annotated[float, typer.Option(help="Seconds per execution.")] = 5.0,
    memory_mb: Annotated[int, typer.Option(help="Memory limit per execution, MiB.")] = 512,
    cold: Annotated[
        bool,
        typer.Option(
            "--cold",
            help="A fresh sandbox per execution instead of warm sandboxes (see docs/sandbox.md).",
        ),
    ] = False,
    name: Annotated[str, typer.Option(help="Run name (for --resume).")] = "code",
    db: DbOption = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the latest unfinished run of this name.")
    ] = False,
    fmt: FormatOption = Format.text,
    output: OutputOption = None,
    allow_code_execution: Annotated[
        bool,
        typer.Option(
            "--allow-code-execution", help="Run the generated code (see docs/sandbox.md)."
        ),
    ] = False,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="Where executions run: local (this machine's sandbox) or ray (the sandboxes of"
            f" Ray workers; needs {RAY_EXTRA_HELP}).",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="Ray cluster for --executor ray (see aieval run)."),
    ] = None,
) -> None:
    """Evaluate generated code: n completions per problem, run in the sandbox, pass@k.

    Exit codes: 0 every sample has a verdict; 2 a usage or configuration error; 3 some samples
    errored (the sandbox failed before the candidate ran, or a completion could not be
    generated): the summary is still printed, and the first error goes to stderr.
    """
    from aieval.code import evaluate_code, load_code_eval
    from aieval.sandbox import SandboxLimits

    check_executor(executor)
    check_ray(executor, ray_address)  # the install hint before anything runs
    try:
        ks = [int(part) for part in k.split(",") if part.strip()]
    except ValueError as exc:
        raise ConfigError(f"--k {k!r}: give integers separated by commas, e.g. 1,10") from exc
    options: dict[str, Any] = dict(
        name=name,
        n=n,
        k=ks,
        provider=provider,
        model=model,
        base_url=base_url,
        temperature=temperature,
        completions=completions,
        canonical=canonical,
        allow_code_execution=allow_code_execution,
        workers=workers,
        limits=SandboxLimits(timeout=timeout, memory_mb=memory_mb),
    )
    if cold:
        options["limits"] = dataclasses.replace(options["limits"], warm=False)
    defaults = {**_DEFAULTS, "limits": SandboxLimits(timeout=5.0, memory_mb=512)}
    if problems.suffix in (".yaml", ".yml"):
        # The file decides; command-line options the user changed from their defaults win.
        given = {key for key, value in options.items() if value != defaults.get(key)}
        from_file = load_code_eval(problems)
        problems = from_file.pop("problems")
        options = {**options, **from_file, **{key: options[key] for key in given}}
        options["allow_code_execution"] = allow_code_execution or from_file.get(
            "allow_code_execution", False
        )
    result = evaluate_code(
        problems,
        store=store_location(db),
        resume=True if resume else None,
        executor=executor,
        ray_address=ray_address,
        **options,
    )
    write_text(result.summary.render(fmt.canonical().value), output)
    _exit_on_errors(result.run)


def _exit_on_errors(run: RunResult) -> None:
    """Exit 3, naming the first error, when samples of the run errored (as ``aieval run``)."""
    if not run.error_count:
        return
    top = run.top_errors[0][0] if run.top_errors else "see the stored samples"
    sys.stderr.write(
        printable(
            f"error: code evaluation {run.id}: {run.error_count} of {run.summary.samples} "
            f"samples errored, with no verdict (most frequent: {top}); see docs/sandbox.md"
        )
        + "\n"
    )
    raise typer.Exit(EXIT_ERRORS)


def code_report_command(
    run: RunRef,
    db: DbOption = None,
    fmt: FormatOption = Format.text,
    output: OutputOption = None,
) -> None:
    """Per-problem c/n, pass@k and statuses of a stored code evaluation."""
    from aieval.code import code_report

    path = existing_store_path(db)
    write_text(code_report(path, run).render(fmt.canonical().value), output)
