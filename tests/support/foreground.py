"""Start a command as a terminal starts a foreground job, so a test can press Ctrl-C on it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

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
