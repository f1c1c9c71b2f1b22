"""`aieval run` minimums (settings.min_pass_rate, settings.min, --min-pass-rate): exit 4 with
the numbers that missed, stored with the run; bad keys refused naming them."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.cli import Cli

from aieval import Store

AIEVAL = [sys.executable, "-m", "aieval"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter: its exit status as CI sees it."""
    return subprocess.run([*AIEVAL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def half_right(tmp_path: Path, settings: str = "{}") -> None:
    """4 rows, 2 answered right: pass rate 0.5, exact_match mean 0.5."""
    with (tmp_path / "rows.jsonl").open("w") as handle:
        for i in range(4):
            row = {"id": f"r{i}", "prompt": "p", "expected": "x"}
            handle.write(json.dumps({**row, "prediction": "x" if i % 2 else "y"}) + "\n")
    (tmp_path / "e.yaml").write_text(
        f"name: gate\ndataset: rows.jsonl\nscorers: [exact_match]\nsettings: {settings}\n"
    )


@pytest.mark.slow
def test_a_pass_rate_below_the_minimum_exits_4_with_the_numbers(
    tmp_path: Path, in_process: Cli
) -> None:
    half_right(tmp_path)
    done = cli("run", "e.yaml", "--db", "r.db", "-q", "--min-pass-rate", "0.8", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "pass rate 0.5 below its minimum 0.8" in done.stderr
    assert "below its minimums" in done.stdout
    (row,) = Store(tmp_path / "r.db").list_runs(name="gate")
    stored = row.metrics["minimums"]
    assert stored["met"] is False and stored["min_pass_rate"] == 0.8
    assert stored["missed"] == [{"metric": "pass_rate", "minimum": 0.8, "value": 0.5}]
    shown = in_process("report", row.id, "--db", "r.db", "--format", "json", cwd=tmp_path)
    report = json.loads(shown.stdout)
    assert report["minimums"]["missed"] == stored["missed"]
    text = in_process("report", row.id, "--db", "r.db", cwd=tmp_path).stdout
    assert "Minimums (MISSED)" in text and "pass rate" in text
    met = in_process("run", "e.yaml", "--db", "r.db", "-q", "--min-pass-rate", "0.5", cwd=tmp_path)
    assert met.returncode == 0, met.stderr
    assert "minimums: pass_rate 0.500 (min 0.5)" in met.stdout


def test_a_scorer_minimum_from_the_eval_file(tmp_path: Path, in_process: Cli) -> None:
    half_right(tmp_path, "{min: {exact_match: 0.75}, min_pass_rate: 0.25}")
    done = in_process("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "exact_match mean score 0.5 below its minimum 0.75" in done.stderr
    assert "pass rate" not in done.stderr  # 0.5 meets 0.25
    # the command line's minimum replaces the file's
    assert in_process("run", "e.yaml", "--db", "r.db", "-q", "--min-pass-rate", "0.9",
                cwd=tmp_path).returncode == 4  # fmt: skip


@pytest.mark.slow
def test_a_run_that_scored_nothing_never_meets_a_minimum(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(
        "from aieval import scorer\n\n@scorer\ndef boom(prediction, expected):\n"
        "    raise RuntimeError('down')\n"
    )
    half_right(tmp_path, "{max_error_rate: 1.0, min_pass_rate: 0.0, min: {boom: 0.0}}")
    text = (tmp_path / "e.yaml").read_text().replace("[exact_match]", "[boom]")
    (tmp_path / "e.yaml").write_text(text + "imports: [boom.py]\n")
    done = cli("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "pass rate: none (nothing scored), minimum 0;" in done.stderr
    assert "boom mean score: none (nothing scored), minimum 0" in done.stderr
    # errors beyond the budget take precedence: exit 3
    text = (tmp_path / "e.yaml").read_text().replace("max_error_rate: 1.0, ", "")
    (tmp_path / "e.yaml").write_text(text)
    assert cli("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path).returncode == 3


def test_bad_minimums_are_refused_naming_the_key(tmp_path: Path, in_process: Cli) -> None:
    half_right(tmp_path, "{min: {exact_mach: 0.5}}")
    done = in_process("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 2
    assert "min: no scorer named 'exact_mach' in this run (its scorers: exact_match)" in (
        done.stderr
    )
    half_right(tmp_path, "{min: {exact_match: 1.5}}")
    done = in_process("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 2
    assert "settings.min" in done.stderr and "exact_match" in done.stderr
    assert "between 0 and 1" in done.stderr
    half_right(tmp_path, "{min_pass_rate: -0.1}")
    done = in_process("run", "e.yaml", "--db", "r.db", "-q", cwd=tmp_path)
    assert done.returncode == 2 and "settings.min_pass_rate" in done.stderr
    half_right(tmp_path)
    done = in_process("run", "e.yaml", "--db", "r.db", "-q", "--min-pass-rate", "2", cwd=tmp_path)
    assert done.returncode == 2 and "--min-pass-rate" in done.stderr
    assert Store(tmp_path / "r.db").list_runs(name="gate") == []
