"""Output that is not a terminal (a CI log) is never wrapped: a long summary or error stays one
line, on stdout and stderr, for every command (they share the consoles)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.push.helpers import make_run

from aieval.store import Store


def aieval(*args: str) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter, stdout and stderr captured (not terminals)."""
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args], capture_output=True, text=True, timeout=300
    )


def one_line(output: str, start: str, end: str) -> str:
    """The line of ``output`` holding ``start``; it must also hold ``end`` (not wrapped)."""
    (line,) = [line for line in output.splitlines() if start in line]
    assert end in line, output
    return line


def test_a_long_push_summary_stays_one_line(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    make_run(src, "a-run-name-long-enough-to-need-some-room", 2)
    with Store(src) as store:
        live = store.create_run(name="still-going")  # this process runs it: it is live
    done = aieval("push", "--db", str(src), "--to", str(tmp_path / "team.db"))
    assert done.returncode == 0, done.stderr
    line = one_line(done.stdout, "pushed 1 run to", "push again once it ends")
    assert f"1 still running, not pushed ({live})" in line and len(line) > 160


def test_a_long_error_stays_one_line(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 2)
    missing = "no-such-run-" + "x" * 150
    done = aieval("push", missing, "--db", str(src), "--to", str(tmp_path / "team.db"))
    assert done.returncode != 0
    line = one_line(done.stderr, "error:", missing)
    assert len(line) > 160


def test_a_long_run_list_row_is_not_wrapped_in_a_log(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    name = "a-" + "very-" * 30 + "long-name"
    make_run(src, name, 2)
    done = aieval("runs", "--db", str(src))
    assert done.returncode == 0, done.stderr
    assert name in done.stdout
