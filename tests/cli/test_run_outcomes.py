"""`aieval run` exit codes: errored samples, a full disk, Ctrl-C and dead runs are never green."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.cli import Cli
from tests.support.foreground import foreground, wait_for_file
from tests.support.held import held_eval
from tests.support.stored import stored_samples, wait_for_samples

AIEVAL = [sys.executable, "-m", "aieval"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter: its exit status as CI sees it."""
    return subprocess.run([*AIEVAL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def write_rows(path: Path, n: int, prediction: str = "x", **extra: str) -> None:
    with path.open("w") as handle:
        for i in range(n):
            row = {"id": f"r{i}", "prompt": "p", "expected": "x", "prediction": prediction}
            handle.write(json.dumps({**row, **extra}) + "\n")


@pytest.mark.slow
def test_all_errors_exit_3_with_top_errors(tmp_path: Path) -> None:
    write_rows(tmp_path / "rows.jsonl", 6)
    (tmp_path / "boom.py").write_text(
        "from aieval import scorer\n\n@scorer\ndef boom(prediction, expected):\n"
        "    raise RuntimeError('judge unreachable')\n"
    )
    (tmp_path / "e.yaml").write_text(
        "name: errs\ndataset: rows.jsonl\nimports: [boom.py]\nscorers: [boom]\n"
    )
    done = cli("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "completed with errors" in done.stdout
    assert "6 × boom: scorer 'boom' raised RuntimeError: judge unreachable" in done.stdout
    assert "6 of 6 samples errored" in done.stderr
    tolerated = cli("run", "e.yaml", "--db", "r.db", "-q", "--max-error-rate", "1", cwd=tmp_path)
    assert tolerated.returncode == 0, tolerated.stderr
    (tmp_path / "t.yaml").write_text(
        "name: errs\ndataset: rows.jsonl\nimports: [boom.py]\nscorers: [boom]\n"
        "settings: {max_error_rate: 1.0}\n"
    )
    assert cli("run", "t.yaml", "--db", "r.db", "-q", cwd=tmp_path).returncode == 0


def test_empty_dataset_exits_2(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text("")
    (tmp_path / "e.yaml").write_text("name: empty\ndataset: rows.jsonl\nscorers: [exact_match]\n")
    done = cli("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 2
    assert "no rows" in done.stderr


def start_held(tmp_path: Path, rows: int, stored: int) -> tuple[subprocess.Popen[str], Path]:
    """`aieval run` of an eval whose rows from ``stored`` on wait for the returned gate, once
    it has stored the ``stored`` rows before them: it is mid-run until the test acts."""
    gate = held_eval(tmp_path, name="s", rows=rows, held_from=stored, settings="{concurrency: 2}")
    child = subprocess.Popen(
        foreground([*AIEVAL, "run", "s.yaml", "--db", "r.db", "-q"]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_samples(tmp_path / "r.db", stored, child)
    return child, gate


@pytest.mark.slow
def test_sigint_prints_the_resume_hint(tmp_path: Path, in_process: Cli) -> None:
    child, gate = start_held(tmp_path, 40, 10)
    try:
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        gate.touch()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert "interrupted; resume with aieval run s.yaml --resume --db r.db" in err
    assert "Traceback" not in err, err
    assert stored_samples(tmp_path / "r.db") == 10, "the held samples were never scored"
    runs = in_process("runs", "--db", "r.db", cwd=tmp_path)
    assert "interrupted" in runs.stdout


@pytest.mark.slow
def test_a_killed_run_is_listed_as_interrupted_and_resumes(tmp_path: Path, in_process: Cli) -> None:
    child, gate = start_held(tmp_path, 60, 10)
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=120)
    gate.touch()
    runs = in_process("runs", "--db", "r.db", cwd=tmp_path)
    assert "interrupted" in runs.stdout and "running" not in runs.stdout
    assert "interrupted" in in_process("show", "s", "--db", "r.db", cwd=tmp_path).stdout
    resumed = cli("run", "s.yaml", "--db", "r.db", "-q", "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    db = sqlite3.connect(tmp_path / "r.db")
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT sample_id) FROM samples").fetchone() == (
        60,
        60,
    )
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (1,)


@pytest.mark.slow
def test_ctrl_c_before_the_run_starts_says_interrupted(tmp_path: Path) -> None:
    # a Python eval file is imported before the run starts: this one waits there for a gate
    marker, gate = tmp_path / "loading", tmp_path / "gate"
    (tmp_path / "e.py").write_text(
        "import pathlib, time\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        f"while not pathlib.Path({str(gate)!r}).exists():\n"
        "    time.sleep(0.02)\n"
        "EVAL = {'name': 'early', 'dataset': 'rows.jsonl', 'scorers': ['exact_match']}\n"
    )
    write_rows(tmp_path / "rows.jsonl", 3)
    child = subprocess.Popen(
        foreground([*AIEVAL, "run", "e.py", "--db", "r.db", "-q"]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_file(marker, child)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        gate.touch()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130
    assert err.strip() == "interrupted", err
    assert not (tmp_path / "r.db").exists(), "nothing ran"


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.slow
def test_a_full_disk_fails_the_run_and_resume_finishes_it(tmp_path: Path, small_disk: Path) -> None:
    # 3 MB of answers on a 2 MB disk; the run's end still fits when the batch that fills the
    # disk is rolled back (on a disk left with no page at all, the row stays "running" and
    # reads as interrupted once the process is gone: --resume finds it either way)
    n = 3000
    write_rows(tmp_path / "rows.jsonl", n, prediction="y" * 1000)
    (tmp_path / "e.yaml").write_text("name: full\ndataset: rows.jsonl\nscorers: [exact_match]\n")
    db = small_disk / "r.db"
    failed = cli("run", "e.yaml", "--db", str(db), "-q", cwd=tmp_path)
    assert failed.returncode == 1
    assert "disk is full" in failed.stderr and "--resume" in failed.stderr
    conn = sqlite3.connect(db)
    status, error, metrics = conn.execute("SELECT status, error, metrics FROM runs").fetchone()
    kept = stored_samples(db)
    assert 0 < kept < n
    assert status == "failed" and "disk is full" in error
    assert json.loads(metrics)["samples"] == kept  # the summary counts only stored samples
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    subprocess.run(["mount", "-o", "remount,size=32m", str(small_disk)], check=True)
    resumed = cli("run", "e.yaml", "--db", str(db), "-q", "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT sample_id) FROM samples").fetchone() == (
        n,
        n,
    )
    assert conn.execute("SELECT status FROM runs").fetchall() == [("completed",)]
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


@pytest.mark.parametrize("bad", ["nan", "-0.1", "2", "inf"])
def test_max_error_rate_outside_0_1_says_what_it_must_be(
    tmp_path: Path, bad: str, in_process: Cli
) -> None:
    write_rows(tmp_path / "rows.jsonl", 2)
    (tmp_path / "e.yaml").write_text("name: r\ndataset: rows.jsonl\nscorers: [exact_match]\n")
    done = in_process("run", "e.yaml", "--db", "r.db", "-q", "--max-error-rate", bad, cwd=tmp_path)
    assert done.returncode == 2
    said = " ".join((done.stdout + done.stderr).split())
    assert "--max-error-rate" in said and "must be a number between 0 and 1" in said, said
    (tmp_path / "s.yaml").write_text(
        "name: r\ndataset: rows.jsonl\nscorers: [exact_match]\n"
        f"settings: {{max_error_rate: {'.nan' if bad == 'nan' else bad}}}\n"
    )
    done = in_process("run", "s.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2 and "must be a number between 0 and 1" in said, said
