"""Start a command as a terminal starts a foreground job, so a test can press Ctrl-C on it,
and wait for it to reach the point where the test acts."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# A shell without job control starts background jobs with SIGINT ignored, and every process
# they start inherits that (POSIX): a suite run in the background (``pytest ... &`` in a
# script) would start commands that a test's SIGINT cannot interrupt, as in a terminal a
# background job is not interrupted by Ctrl-C. This resets SIGINT before it runs the command.
_RESET_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def foreground(argv: Sequence[str]) -> list[str]:
    """``argv`` run with SIGINT at its default, whatever this process ignores (same pid)."""
    return [sys.executable, "-c", _RESET_SIGINT, *argv]


def wait_for_file(path: Path, proc: subprocess.Popen[Any], *, within: float = 180.0) -> None:
    """Wait until ``proc`` creates ``path`` (a marker it writes on reaching some point).

    Fails loudly if ``proc`` ends first, or after ``within`` seconds (a bound for what must
    *eventually* happen, however busy the machine).
    """
    deadline = time.monotonic() + within
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(
                f"the process ended ({proc.returncode}) before {path.name} existed:\n"
                f"{out or ''}{err or ''}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} did not appear within {within:.0f} s")
        time.sleep(0.02)
