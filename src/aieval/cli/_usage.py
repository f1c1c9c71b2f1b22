"""Command-line usage errors as one line, whichever click ``typer`` brings.

typer >= 0.16 ships its own copy of click (``typer._click``) whose exceptions are not
``click``'s; older typer uses ``click`` itself. Both are recognised here, so a misspelt option
or a missing argument prints ``error: ...`` plus a ``--help`` hint and exits 2 on any supported
typer, instead of a traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, NoReturn

from rich.console import Console
from rich.text import Text

from aieval._terminal import printable
from aieval.cli._exits import EXIT_USAGE

__all__ = ["handle", "print_version"]


def print_version(value: bool) -> None:
    """``--version``: print ``aieval X.Y.Z`` and stop (a typer option callback)."""
    if not value:
        return
    import typer

    from aieval import __version__

    sys.stdout.write(f"aieval {__version__}\n")
    raise typer.Exit(0)


def handle(exc: BaseException, console: Console) -> bool:
    """Report a click usage error or abort in one line and exit; False if ``exc`` is neither."""
    if _is(exc, "Abort"):
        console.print("aborted", highlight=False)
        sys.exit(1)
    if not _is(exc, "ClickException"):
        return False
    if not _is(exc, "UsageError"):
        _die(console, _message(exc), None, int(getattr(exc, "exit_code", 1)))
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or "aieval"
    _die(console, f"{path}: {_message(exc)}", f"try '{path} --help'", EXIT_USAGE)


def _message(exc: BaseException) -> str:
    ctx = getattr(exc, "ctx", None)
    if _is(exc, "NoArgsIsHelpError"):  # its "message" is the whole help page
        return _missing_command(ctx)
    format_message = getattr(exc, "format_message", None)
    text = " ".join(str(format_message() if callable(format_message) else exc).split())
    text = text.replace("Value error, ", "")  # typer's pydantic coercion prefix
    if text.rstrip(".").lower() == "missing command":
        return _missing_command(ctx)
    return text or type(exc).__name__


def _missing_command(ctx: Any) -> str:
    list_commands = getattr(getattr(ctx, "command", None), "list_commands", None)
    names: list[str] = list(list_commands(ctx)) if callable(list_commands) else []
    if not names:
        return "missing command"
    return f"missing command; one of: {', '.join(names)}"


def _die(console: Console, message: str, hint: str | None, code: int) -> NoReturn:
    line = Text.assemble(("error:", "bold red"), " ", printable(message))
    console.print(line, highlight=False, soft_wrap=True)
    if hint:
        console.print(hint, style="dim", highlight=False, soft_wrap=True)
    sys.exit(code)


def _is(exc: BaseException, class_name: str) -> bool:
    return any(isinstance(exc, cls) for cls in _classes(class_name))


def _classes(class_name: str) -> list[type[BaseException]]:
    found = []
    for module_name in ("typer._click.exceptions", "click.exceptions"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        cls = getattr(module, class_name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return found
