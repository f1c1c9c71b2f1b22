"""``aieval import promptfoo``: translate another tool's evaluation into aieval files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._print import err, labelled, out

__all__ = ["import_app"]

import_app = typer.Typer(
    cls=HelpGroup,
    help="Translate another tool's evaluation into an aieval eval file and dataset.",
    no_args_is_help=True,
)


@import_app.command("promptfoo", cls=HelpCommand)
def promptfoo_command(
    config: Annotated[
        Path,
        typer.Argument(
            help="promptfooconfig.yaml (or, with --model-outputs, a standalone assertions file)."
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", "-o", help="Directory to write the eval, dataset and stubs.")
    ],
    model_outputs: Annotated[
        Path | None,
        typer.Option(
            "--model-outputs",
            help="JSON list of outputs to grade (promptfoo eval --assertions A --model-outputs O).",
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the files of an earlier import.")
    ] = False,
    allow_outside: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-outside",
            help="A folder or file outside the configuration's folder that its file:// "
            "references may read (repeatable). Without it, only files inside are read.",
        ),
    ] = None,
    allow_endpoints: Annotated[
        bool,
        typer.Option(
            "--allow-endpoints",
            help="Carry over the providers' apiBaseUrl and apiKeyEnvar (where requests go, "
            "with which key) after checking them; without it such providers are not mapped.",
        ),
    ] = False,
) -> None:
    """Translate a promptfoo configuration: prompts x providers into eval files (a prompt
    template and models each), tests into dataset rows with their own checks, and the
    assertions with no aieval equivalent into stub checks to write by hand. Prints what mapped
    and what did not (also written to import-report.md). The configuration is data: it reads
    files only inside its own folder (and --allow-outside), chooses no endpoint or key
    (unless --allow-endpoints), and the import writes only into --out."""
    from aieval.migrate import import_promptfoo

    result = import_promptfoo(
        config,
        out_dir,
        model_outputs=model_outputs,
        overwrite=overwrite,
        allow_outside=allow_outside or (),
        allow_endpoints=allow_endpoints,
    )
    out.print(result.text(), highlight=False, soft_wrap=True)
    commands = "; ".join(f"aieval run {printable(str(p))}" for p in result.eval_files)
    if result.complete:
        err.print(labelled("imported:", "green", f"run it with: {commands}"), soft_wrap=True)
        return
    stubs = (
        f"the checks in {printable(str(result.stubs))} fail every sample until written; "
        if result.stubs
        else ""
    )
    err.print(
        labelled(
            "imported, incomplete:",
            "yellow",
            f"{len(result.unmapped)} part(s) not mapped, {len(result.not_equivalent)} "
            f"check(s) not equivalent (see above); {stubs}then: {commands}",
        ),
        soft_wrap=True,
    )
