"""Code evaluation runs in warm sandboxes by default; ``--cold`` and ``warm=False`` turn it off."""

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from aieval.code import evaluate_code
from aieval.errors import ConfigError
from aieval.sandbox import SandboxLimits

PROBLEM = {
    "task_id": "p0",
    "prompt": "def add(a, b):\n",
    "entry_point": "add",
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    "canonical_solution": "    return a + b\n",
}


def _isolations(db: Path, run_id: str | None = None) -> list[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT run_id, metadata FROM scores ORDER BY run_id").fetchall()
    return [json.loads(meta)["isolation"] for run, meta in rows if run_id in (None, run)]


def test_aieval_code_is_warm_unless_told_cold(tmp_path: Path) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps(PROBLEM) + "\n")
    for flag in ([], ["--cold"]):
        db = tmp_path / f"r{len(flag)}.db"
        argv = [sys.executable, "-m", "aieval", "code", str(problems), "--canonical"]
        argv += ["--allow-code-execution", "--db", str(db), *flag]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        (isolation,) = _isolations(db)
        assert ("warm:" in isolation) == (not flag), isolation
        assert ("pids.max 22" if not flag else "pids.max 20") in isolation


def test_the_default_is_not_stored_so_earlier_runs_resume(tmp_path: Path) -> None:
    rows = [{**PROBLEM, "task_id": f"p{i}"} for i in range(3)]
    db = tmp_path / "runs.db"
    first = evaluate_code(rows, canonical=True, allow_code_execution=True, store=db)
    with sqlite3.connect(db) as conn:  # as if killed before its last execution was stored
        conn.execute("UPDATE runs SET status='interrupted' WHERE id=?", (first.run.id,))
        for table in ("scores", "samples"):
            conn.execute(f"DELETE FROM {table} WHERE sample_id='p2#0'")
        (config,) = conn.execute("SELECT config FROM runs").fetchone()
    # a run stored before the option existed has this very configuration
    # (as a key or a field: the text also holds paths, which may contain the word anywhere)
    assert re.search(r"\bwarm\b\W*[=:]", config) is None
    cold = SandboxLimits(warm=False)
    with pytest.raises(ConfigError, match=r"limits\.warm: unset then, False now"):
        evaluate_code(
            rows, canonical=True, allow_code_execution=True, store=db, resume=True, limits=cold
        )
    done = evaluate_code(rows, canonical=True, allow_code_execution=True, store=db, resume=True)
    assert done.run.id == first.run.id and done.pass_at_k == {1: 1.0}
    assert all("warm:" in text for text in _isolations(db, first.run.id))
