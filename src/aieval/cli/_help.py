"""How ``--help`` pages look, for every command: the command classes all of them use.

typer prints a docstring's later paragraphs with their source line breaks (ragged lines, cut at
80 columns in the source, then wrapped again by the terminal), and shows a plain flag such as
``--quiet`` with a ``<bool>`` value it never takes. :class:`HelpCommand` and :class:`HelpGroup`
reflow each paragraph into one line (the terminal wraps it to its width) and show no value for
a flag.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup

__all__ = ["HelpCommand", "HelpGroup", "reflow"]

# a line that starts a list item keeps its own line
_ITEMS = ("- ", "* ", "• ")


def reflow(text: str | None) -> str | None:
    """``text`` with each paragraph on one line; blank lines, list items and a paragraph
    marked ``\\b`` (click's "do not rewrap") keep their breaks.

    >>> reflow("One line\\nand its end.\\n\\n- an item\\n- another")
    'One line and its end.\\n\\n- an item\\n- another'
    """
    if text is None:
        return None
    paragraphs = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith("\b"):
            paragraphs.append(paragraph)
            continue
        lines: list[str] = []
        for line in paragraph.split("\n"):
            line = line.strip()
            if lines and line and not line.startswith(_ITEMS):
                lines[-1] = f"{lines[-1]} {line}"
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def _no_flag_values(command: Any, ctx: Any) -> None:
    """Show no value type for a boolean flag (``--quiet``, ``--comment/--no-comment``,
    ``--help``): an empty metavar is what typer's help prints for it."""
    for param in command.get_params(ctx):
        if getattr(param, "is_bool_flag", False) or (
            getattr(param, "is_flag", False) and not getattr(param, "count", False)
        ):
            param.metavar = ""


class HelpCommand(TyperCommand):
    """A command whose ``--help`` reflows its text and shows flags without a value."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, help=reflow(help), **kwargs)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _no_flag_values(self, ctx)
        super().format_help(ctx, formatter)


class HelpGroup(TyperGroup):
    """A command group whose ``--help`` reflows its text and shows flags without a value."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, help=reflow(help), **kwargs)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _no_flag_values(self, ctx)
        super().format_help(ctx, formatter)
