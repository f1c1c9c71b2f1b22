"""``--help`` pages: each paragraph of a command's text is reflowed to the page width (not the
source's line breaks), and a plain flag shows no ``<bool>`` value it never takes."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from aieval.cli import app
from aieval.cli._help import HelpCommand, HelpGroup, reflow

WIDTH = 100


def _help(*command: str, cwd: Path) -> str:
    # no colour: a CI runner's GITHUB_ACTIONS or FORCE_COLOR would make typer force it
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS", "TERMINAL_WIDTH")
    }
    env["COLUMNS"] = str(WIDTH)
    done = subprocess.run(
        [sys.executable, "-m", "aieval", *command, "--help"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _description(page: str) -> list[list[str]]:
    """The paragraphs of the text between the usage line and the first panel."""
    lines = page.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    paragraphs: list[list[str]] = [[]]
    for line in lines[start:end]:
        if line.strip():
            paragraphs[-1].append(line.rstrip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


@pytest.mark.parametrize("command", [("github",), ("run",), ("compare",), ("push",)])
def test_help_paragraphs_fill_the_width(tmp_path: Path, command: tuple[str, ...]) -> None:
    paragraphs = _description(_help(*command, cwd=tmp_path))
    assert len(paragraphs) >= 2
    for paragraph in paragraphs:
        for line, after in itertools.pairwise(paragraph):
            # a line ends early only when the next word would not have fitted on it
            next_word = after.split()[0]
            assert len(line) + 1 + len(next_word) > WIDTH - 2, (line, after)


@pytest.mark.parametrize("command", [("github",), ("run",), ()])
def test_flags_show_no_value_type(tmp_path: Path, command: tuple[str, ...]) -> None:
    page = _help(*command, cwd=tmp_path)
    assert "<bool>" not in page
    assert "--help" in page
    assert "<str>" in page or not command  # options that take a value still show its type


def test_every_command_renders_its_help_through_the_shared_classes() -> None:
    def walk(command: object, path: str) -> list[str]:
        wrong = [] if isinstance(command, HelpCommand | HelpGroup) else [path]
        for name, sub in getattr(command, "commands", {}).items():
            wrong += walk(sub, f"{path} {name}")
        return wrong

    assert walk(typer.main.get_command(app), "aieval") == []


def test_reflow_keeps_paragraphs_lists_and_verbatim_blocks() -> None:
    text = "First line\nsecond line.\n\n- one\n- two\n  continued\n\n\bkept\nas is"
    assert reflow(text) == "First line second line.\n\n- one\n- two continued\n\n\bkept\nas is"
