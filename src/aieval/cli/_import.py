"""``aieval import promptfoo|deepeval``: translate another tool's evaluation into aieval files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._print import err, labelled, out

if TYPE_CHECKING:
    from aieval.migrate import ConversationImport

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
    from aieval.migrate import (
        import_promptfoo,
        import_promptfoo_conversations,
        is_conversation_config,
    )

    if model_outputs is None and is_conversation_config(config, allow_outside or ()):
        # simulated-user tests and tests sharing a conversation become scenarios
        conversations = import_promptfoo_conversations(
            config,
            out_dir,
            overwrite=overwrite,
            allow_outside=allow_outside or (),
            allow_endpoints=allow_endpoints,
        )
        _conversations_done(conversations)
        return
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


@import_app.command("deepeval", cls=HelpCommand)
def deepeval_command(
    dataset: Annotated[
        Path,
        typer.Argument(
            help="A DeepEval conversational dataset: EvaluationDataset.save_as json or jsonl "
            "(ConversationalGolden or ConversationalTestCase fields)."
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", "-o", help="Directory to write the scenarios and eval file.")
    ],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the files of an earlier import.")
    ] = False,
) -> None:
    """Translate DeepEval conversations into scenarios: scenario -> goal, user_description
    (or persona) -> persona, the user turns -> scripted user turns, the assistant's tool calls
    -> recorded tool results, expected_outcome and the rest -> the scenario's metadata; a
    finished conversation is also written as a record (recorded.jsonl). Prints what was
    translated and each field that was not, with why (also in import-report.md). The file is
    data: it chooses no code, endpoint, key or file; the import writes only into --out."""
    from aieval.migrate import import_deepeval

    _conversations_done(import_deepeval(dataset, out_dir, overwrite=overwrite))


def _conversations_done(result: ConversationImport) -> None:
    out.print(result.text(), highlight=False, soft_wrap=True)
    command = f"aieval run {printable(str(result.eval_file))}"
    if result.complete:
        err.print(labelled("imported:", "green", f"run it with: {command}"), soft_wrap=True)
        return
    err.print(
        labelled(
            "imported, incomplete:",
            "yellow",
            f"{len(result.untranslated)} field(s) not translated, {len(result.to_set)} "
            f"setting(s) to make in {printable(str(result.eval_file))} (see above); then: "
            f"{command}",
        ),
        soft_wrap=True,
    )
