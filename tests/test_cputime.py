"""``--cpu-durations``: each test's CPU, its own and its waited-for processes', ranked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

_TESTS = """
import subprocess, sys
import pytest

def spin():
    subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.4\\n"
                    "while time.process_time() < end: pass"], check=True)

@pytest.fixture(scope="session")
def shared():
    yield
    spin()  # torn down after the last test, as a worker's Chromium is

def test_spins_in_a_child():
    # CPU used in a process the test waited for counts as the test's
    spin()

def test_idle(shared):
    pass
"""


@pytest.mark.slow  # two interpreters and an xdist worker: seconds on a busy machine
def test_the_tests_are_ranked_by_cpu_with_their_children_across_xdist(tmp_path: Path) -> None:
    (tmp_path / "test_spin.py").write_text(_TESTS)
    env = {
        **os.environ,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # only the plugins needed: quick to start
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    args = ["-p", "xdist", "-n", "1", "-p", "tests.support.cputime", "--cpu-durations=5"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-c",
            os.devnull,
            "--rootdir",
            str(tmp_path),
            *args,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    listed = re.findall(r"^\s*([\d.]+)s cpu  (\S+)$", done.stdout, re.MULTILINE)
    # the worker's figures reached the controller, which lists them: the spinning test first
    assert [name for _, name in listed] == ["test_spin.py::test_spins_in_a_child",
                                            "test_spin.py::test_idle"], done.stdout  # fmt: skip
    spun, idle = (float(seconds) for seconds, _ in listed)
    assert spun >= 0.4 > idle, done.stdout  # the session's tear-down is not the last test's
    session = re.search(
        r"^\s*([\d.]+)s cpu  \(a worker's session fixtures torn down after "
        r"test_spin.py::test_idle\)$",
        done.stdout,
        re.MULTILINE,
    )
    assert session is not None and float(session[1]) >= 0.4, done.stdout
    assert "most CPU (" in done.stdout
