"""bench/promotion.py's closed-form table: the size and trial arguments parse and a tiny run
prints one row per method with its rates, the trials where the two decisions differ, and times."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "promotion.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.mark.slow  # two bootstrap-t decisions at n = 20,000 per shape
def test_closed_form_table_runs_at_twenty_thousand_with_two_trials() -> None:
    done = _bench("--closed-form", "--sizes", "20000", "--trials", "2", "--equal-trials", "1",
                  "--closed-trials", "3", "--models", "skewed", "binary")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 20000 |")]
    # the pair on the same two (and one) trials, then the closed form alone on three
    assert [r.split(" | ")[1:4] for r in rows] == [
        ["skewed", "t", "2 / 1"],
        ["skewed", "bootstrap-t", "2 / 1"],
        ["skewed", "t", "3 / 3"],
        ["binary", "proportion", "2 / 1"],
        ["binary", "bootstrap-t", "2 / 1"],
        ["binary", "proportion", "3 / 3"],
    ]
    rate = r"\d+\.\d% \(\d+\.\d%-\d+\.\d%\)"
    cells = rf"\| {rate} \| (\d|-) \| {rate} \| (\d|-) \| \d+ \(\d+\.\d{{3}}\) \|$"
    assert all(re.search(cells, r) for r in rows), rows
    assert "skewed n=20000 at margin: 3/3 trials" in done.stderr


def test_one_count_per_size_is_checked() -> None:
    done = _bench("--closed-form", "--sizes", "50", "500", "--trials", "2", "3", "4")
    assert done.returncode != 0
    assert "--trials: give one count or one per size (2)" in done.stderr
