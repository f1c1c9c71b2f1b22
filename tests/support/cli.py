"""``aieval ARGS`` through ``aieval.cli.main`` in the test's own process.

The same code path as the command, without an interpreter's start (seconds on a busy machine),
for tests about what a command prints, stores or refuses rather than about its process (its
exit on a signal, its environment, what it imports): those run it in a subprocess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from aieval.cli import _print, main


@dataclass
class Done:
    """What the command ended with, as ``subprocess.run`` would give it."""

    returncode: int
    stdout: str
    stderr: str


def run_main(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Done:
    """Run ``aieval ARGS`` in this process, in ``cwd`` with ``env`` added to the environment
    (its ``COLUMNS`` is the output's width, as in a new process)."""
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    if env and "COLUMNS" in env:
        # the command's consoles read $COLUMNS once, when aieval.cli is imported
        for made in (_print.out, _print.err):
            monkeypatch.setattr(made, "width", _print.log_width())
    if cwd is not None:
        monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    captured = capsys.readouterr()
    return Done(code, captured.out, captured.err)


#: ``invoke(*args, cwd=None, env=None)``: ``aieval ARGS`` in this process
Cli = Callable[..., Done]


@pytest.fixture
def in_process(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``aieval ARGS`` in this process, as :func:`run_main` (what a command prints, stores or
    refuses, without an interpreter's start)."""

    def invoke(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Done:
        return run_main(capsys, monkeypatch, *args, cwd=cwd, env=env)

    return invoke
