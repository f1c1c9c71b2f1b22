"""Output that is not a terminal (a CI log): a long summary or error stays one line, on stdout
and stderr, for every command (they share the consoles); a table fits $COLUMNS, else 100
columns, folding its cells or printing one block per row, and loses no character."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.push.helpers import make_run

from aieval.store import Store


def aieval(*args: str, columns: str | None = None) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter, stdout and stderr captured (not terminals), with
    ``$COLUMNS`` set to ``columns`` (unset by default, whatever the test runner's is)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args], capture_output=True, text=True, timeout=300,
        env=env,
    )  # fmt: skip


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


def test_a_wide_run_list_fits_the_log_width_and_keeps_every_character(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    name = "a-" + "very-" * 30 + "long-name"
    run_id = make_run(src, name, 2)
    done = aieval("runs", "--db", str(src))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100  # no $COLUMNS: 100 columns
    assert "…" not in done.stdout
    # too wide for its columns: one block per row, each cell on its own "column: value" line
    assert any(line.split() == ["id:", run_id] for line in lines), done.stdout
    assert all(line == line.rstrip() for line in lines)  # no padding at a log line's end
    assert name in "".join(line.strip().removeprefix("name:").strip() for line in lines)


def test_the_log_width_follows_columns(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    name = "a-" + "very-" * 30 + "long-name"
    make_run(src, name, 2)
    done = aieval("runs", "--db", str(src), columns="60")
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 60


def test_a_narrow_run_list_stays_a_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ten columns (id ... branch, commit, host, when) fit a 120-column page as a table; at the
    # log's 100 they fold into blocks (the test above). The run is made outside any checkout,
    # so the branch the tests run from (its name's length) does not widen the row.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 2)
    done = aieval("runs", "--db", str(src), columns="120")
    assert done.returncode == 0, done.stderr
    (row,) = [line for line in done.stdout.splitlines() if run_id in line]
    assert "qa" in row and "completed" in row and len(row) <= 120, done.stdout
