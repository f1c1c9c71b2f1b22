"""SIGTERM (how CI systems and Kubernetes stop a job) ends `aieval run` as Ctrl-C does: the run
is marked interrupted with its stored samples kept, the resume hint printed, exit 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from tests.support.held import held_eval
from tests.support.stored import stored_samples

from aieval import Store

AIEVAL = [sys.executable, "-m", "aieval"]


def _stored(location: str, cwd: Path) -> int:
    if not location.startswith("postgresql://"):
        return stored_samples(cwd / location)
    with psycopg.connect(location) as conn:
        made = conn.execute("SELECT to_regclass('samples') IS NOT NULL").fetchone()
        if not (made and made[0]):
            return 0
        row = conn.execute("SELECT COUNT(*) FROM samples").fetchone()
    return int(row[0]) if row else 0


def _wait_for_samples(
    location: str, cwd: Path, at_least: int, child: subprocess.Popen[str]
) -> None:
    deadline = time.monotonic() + 180
    while _stored(location, cwd) < at_least:
        if child.poll() is not None:
            out, err = child.communicate()
            raise AssertionError(f"the run ended ({child.returncode}) first:\n{out}{err}")
        assert time.monotonic() < deadline, f"{at_least} samples not stored after 180 s"
        time.sleep(0.02)  # polling another process's progress in the store


def _ignore_sigint() -> None:
    # a CI job's shell starts background commands with SIGINT ignored: SIGTERM must still work
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
def test_sigterm_marks_the_run_interrupted_and_prints_the_resume_hint(
    tmp_path: Path, store_location: str
) -> None:
    location = "r.db" if not store_location.startswith("postgresql://") else store_location
    gate = held_eval(tmp_path, name="s", rows=40, held_from=10, settings="{concurrency: 2}")
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    child = subprocess.Popen(
        [*AIEVAL, "run", "s.yaml", "--db", location, "-q"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ignore_sigint,
    )  # fmt: skip
    try:
        _wait_for_samples(location, tmp_path, 10, child)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=120)
    finally:
        gate.touch()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 143, err
    assert "interrupted; resume with aieval run s.yaml --resume --db" in err, err
    assert "Traceback" not in err, err
    with Store(tmp_path / location if location == "r.db" else location) as db:
        (only,) = db.list_runs(name="s")
        assert only.status == "interrupted"
        assert db.count_samples(only.id) == 10
    resumed = subprocess.run(
        [*AIEVAL, "run", "s.yaml", "--db", location, "-q", "--resume"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert _stored(location, tmp_path) == 40
