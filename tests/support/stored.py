"""What a test's SQLite store holds, read straight from the file (a run may still be writing)."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path
from typing import Any


def stored_samples(db: Path) -> int:
    """Samples stored in ``db`` so far; 0 while the file or its tables do not exist yet."""
    try:
        with closing(sqlite3.connect(db)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def wait_for_samples(
    db: Path, at_least: int, proc: subprocess.Popen[Any], *, within: float = 180.0
) -> int:
    """Wait until ``proc`` has stored ``at_least`` samples in ``db``; the count then.

    Fails loudly, with the process's output when it has ended, if it ends first or if
    ``within`` seconds (a bound for a process that must *eventually* get there, however busy
    the machine) pass first.
    """
    deadline = time.monotonic() + within
    while (count := stored_samples(db)) < at_least:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(
                f"the process ended ({proc.returncode}) with {count} of {at_least} samples "
                f"stored:\n{out or ''}{err or ''}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"{count} of {at_least} samples stored after {within:.0f} s")
        time.sleep(0.02)
    return count
