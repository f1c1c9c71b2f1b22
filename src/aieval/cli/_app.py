"""The ``aieval`` command: its commands in one Typer app, and :func:`main`, which turns every
failure into one explained line and an exit code."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer
from rich.text import Text

import aieval.cli._online_status  # noqa: F401  (adds ``status`` to the ``online`` group)
from aieval.cli import _usage
from aieval.cli._code import code_command, code_report_command
from aieval.cli._exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from aieval.cli._export import export_otel_command
from aieval.cli._github import github_command
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._import import import_app
from aieval.cli._judges import calibrate_command, judges_command, rubric_app
from aieval.cli._mcp import mcp_app
from aieval.cli._online import online_app
from aieval.cli._print import err, labelled
from aieval.cli._push import push_command
from aieval.cli._report import compare_command, diff_command, report_command, schema_app
from aieval.cli._review import review_app
from aieval.cli._run import Interrupted, run_command
from aieval.cli._serve import serve_command
from aieval.cli._stored import runs_command, show_command
from aieval.errors import AievalError, UserError

__all__ = ["app", "main"]

app = typer.Typer(
    name="aieval",
    help="Evaluate LLM applications and agent workflows; decide whether a version ships.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=HelpGroup,
)


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


# the order of `aieval --help` and of "missing command; one of: ..."
app.command("run", cls=HelpCommand)(run_command)
app.command("export-otel", cls=HelpCommand)(export_otel_command)
app.command("runs", cls=HelpCommand)(runs_command)
app.command("show", cls=HelpCommand)(show_command)
app.add_typer(rubric_app, name="rubric")
app.command("calibrate", cls=HelpCommand)(calibrate_command)
app.add_typer(review_app, name="review")
app.command("judges", cls=HelpCommand)(judges_command)
app.add_typer(schema_app, name="schema")
app.command("report", cls=HelpCommand)(report_command)
app.command("compare", cls=HelpCommand)(compare_command)
app.command("diff", cls=HelpCommand)(diff_command)
app.command("github", cls=HelpCommand)(github_command)
app.command("serve", cls=HelpCommand)(serve_command)
app.command("push", cls=HelpCommand)(push_command)
app.command("code", cls=HelpCommand)(code_command)
app.command("code-report", cls=HelpCommand)(code_report_command)
app.add_typer(import_app, name="import")
app.add_typer(mcp_app, name="mcp")
app.add_typer(online_app, name="online")


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
        err.print(labelled("error:", "bold red", str(exc)), highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)
    except AievalError as exc:
        message = f"{type(exc).__name__}: {exc}"
        err.print(labelled("error:", "bold red", message), highlight=False, soft_wrap=True)
        sys.exit(EXIT_FAILED)
    except Interrupted as exc:
        sys.exit(exc.code)
    except KeyboardInterrupt:
        err.print(
            Text.assemble(
                "interrupted; finish it later with ", ("aieval run EVAL --resume", "bold")
            )
        )
        sys.exit(EXIT_INTERRUPTED)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors and aborts, from typer's own click or click
        if not _usage.handle(exc, err):
            raise
