"""Sandbox limits are finite numbers in range, refused by field name before anything runs."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from aieval.errors import ConfigError
from aieval.sandbox import SandboxLimits, execute

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("timeout", INF),
        ("timeout", -INF),
        ("timeout", NAN),
        ("timeout", 0),
        ("timeout", 1e300),
        ("timeout", "5"),
        ("memory_mb", INF),
        ("cpu_seconds", INF),
        ("max_processes", NAN),
        ("max_file_mb", 2**80),
        ("max_output_bytes", -1),
        ("max_disk_mb", True),
        ("isolation", "docker"),
    ],
)
def test_a_bad_limit_is_refused_naming_its_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=rf"sandbox limit {field}=.* is out of range"):
        SandboxLimits(**{field: value})  # type: ignore[arg-type]


def test_an_infinite_timeout_is_refused_by_execute() -> None:
    with pytest.raises(ConfigError, match="timeout=inf"):
        execute("def f():\n    return 1", "assert f() == 1", timeout=INF)


def test_the_largest_limits_still_run() -> None:
    limits = SandboxLimits(
        timeout=1e9, memory_mb=2**40, max_file_mb=2**40, max_disk_mb=2**40, max_output_bytes=2**40
    )
    result = execute("def f():\n    return 1", "assert f() == 1", limits=limits)
    assert result.status == "passed", result.detail


def test_the_cli_refuses_an_infinite_timeout_before_a_run_exists(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problem = {"task_id": "p0", "prompt": "def f():\n", "entry_point": "f"}
    problems.write_text(json.dumps({**problem, "test": "def check(c):\n    assert c() == 1\n"}))
    completions = tmp_path / "samples.jsonl"
    completions.write_text(json.dumps({"task_id": "p0", "completion": "    return 1\n"}))
    db = tmp_path / "runs.db"
    argv = [sys.executable, "-m", "aieval", "code", str(problems), "--completions"]
    argv += [str(completions), "--db", str(db), "--timeout", "inf", "--allow-code-execution"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "timeout=inf" in done.stderr, done.stderr
    assert "OverflowError" not in done.stderr
    if db.exists():
        with sqlite3.connect(db) as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
            assert (
                "runs" not in tables or conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
            )
