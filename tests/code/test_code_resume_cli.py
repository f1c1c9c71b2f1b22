"""A code evaluation is an ordinary run: the CLI drives it, and a killed run resumes."""

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import Done, run_main
from tests.support.stored import stored_samples, wait_for_samples

import aieval.code._scorer as code_scorer
from aieval.code import evaluate_code

ADD = {
    "prompt": "def add(a, b):\n",
    "entry_point": "add",
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
}
ADDS = "    return a + b\n"


def _files(tmp_path: Path, count: int) -> tuple[Path, Path]:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(
        "".join(json.dumps({**ADD, "task_id": f"p{i}"}) + "\n" for i in range(count))
    )
    completions = tmp_path / "samples.jsonl"
    completions.write_text(
        "".join(json.dumps({"task_id": f"p{i}", "completion": ADDS}) + "\n" for i in range(count))
    )
    return problems, completions


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "aieval", "code", *args, "--allow-code-execution"]


# `aieval code` in which every execution after the third waits for a gate file (the sandbox
# cannot see the test's files, so the gate is in the command's process, before the sandbox):
# killed once three samples are stored, the run has provably not finished.
HELD_CLI = textwrap.dedent(
    """
    import asyncio, os, sys
    import aieval.code._scorer as code_scorer
    from aieval.cli import main

    real, started, gate = code_scorer.execute_async, [], sys.argv.pop(1)

    async def held(*args, **kwargs):
        started.append(args[0])
        while len(started) > 3 and not os.path.exists(gate):
            await asyncio.sleep(0.02)
        return await real(*args, **kwargs)

    code_scorer.execute_async = held
    main(sys.argv[1:])
    """
)


@pytest.mark.slow
def test_a_killed_run_resumes_without_re_executing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problems, completions = _files(tmp_path, 12)
    db, gate = tmp_path / "runs.db", tmp_path / "gate"
    args = [str(problems), "--completions", str(completions), "--db", str(db), "--workers", "1"]
    argv = [sys.executable, "-c", HELD_CLI, str(gate), "code", *args, "--allow-code-execution"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_samples(db, 3, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    before = stored_samples(db)
    assert before == 3, "the held executions never ran"

    executed: list[str] = []
    real = code_scorer.execute_async

    async def counting(*args: Any, **kwargs: Any) -> Any:
        executed.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(code_scorer, "execute_async", counting)
    result = evaluate_code(
        problems, completions=completions, allow_code_execution=True, store=db, resume=True
    )
    assert len(executed) == 12 - before
    assert result.summary.executions == 12 and result.summary.statuses["passed"] == 12
    assert stored_samples(db) == 12


@pytest.mark.slow
def test_cli_reports_in_each_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    problems, _ = _files(tmp_path, 2)
    samples = tmp_path / "mixed.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": t, "completion": c}) + "\n"
            for t in ("p0", "p1")
            for c in ("    return a + b\n", "    return a * b\n")
        )
    )
    db = str(tmp_path / "r.db")
    common = ["--completions", str(samples), "--n", "2", "--k", "1,2", "--db", db]

    def aieval(*args: str) -> Done:  # in this process: the test is about what is printed
        return run_main(capsys, monkeypatch, *args)

    def code(*args: str) -> Done:
        return aieval("code", str(problems), *common, *args, "--allow-code-execution")

    done = code("--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["pass_at_k"]["1"]["value"] == 0.5 and data["pass_at_k"]["2"]["value"] == 1.0
    assert [p["c"] for p in data["problems"]] == [1, 1]
    out = tmp_path / "report.html"
    done = code("--format", "html", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "<table>" in out.read_text()
    stored = aieval("code-report", "code", "--db", db, "-f", "markdown")
    assert stored.returncode == 0, stored.stderr
    assert "| pass@2 | 1.0000 |" in stored.stdout and "| p1 | 1/2 |" in stored.stdout
    alias = aieval("code-report", "code", "--db", db, "-f", "md")
    assert alias.returncode == 0 and alias.stdout == stored.stdout, alias.stderr
    bad = code("--k", "3")
    assert bad.returncode == 2 and "k=[3]" in bad.stderr


def test_a_task_code_eval_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(tmp_path, 2)
    (tmp_path / "fast.jsonl").write_text(
        "".join(
            json.dumps({"task_id": f"p{i}", "completion": c}) + "\n"
            for i in range(2)
            for c in ("    return a + b\n", "    return a - b\n")
        )
    )
    eval_file = tmp_path / "code_eval.yaml"
    eval_file.write_text(
        "task: code\nproblems: problems.jsonl\ncompletions: fast.jsonl\nn: 2\nk: [1, 2]\n"
        "allow_code_execution: true\nlimits: {timeout: 3, max_disk_mb: 16}\n"
    )
    db = str(tmp_path / "r.db")
    done = run_main(capsys, monkeypatch, "code", str(eval_file), "--db", db, "-f", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["pass_at_k"]["1"]["value"] == 0.5 and data["executions"] == 4
    wrong = run_main(capsys, monkeypatch, "run", str(eval_file), "--db", db)
    assert wrong.returncode == 2 and "aieval code" in wrong.stderr
    eval_file.write_text("task: code\nproblems: problems.jsonl\nsamples: 3\n")
    bad = run_main(capsys, monkeypatch, "code", str(eval_file), "--db", db)
    assert bad.returncode == 2 and "unknown key(s) samples" in bad.stderr


def test_a_resume_with_other_sandbox_limits_names_the_limit(tmp_path: Path) -> None:
    from aieval.errors import ConfigError
    from aieval.sandbox import SandboxLimits

    problems, completions = _files(tmp_path, 2)
    db = tmp_path / "runs.db"
    common: dict[str, Any] = {"completions": completions, "allow_code_execution": True}
    first = evaluate_code(problems, store=db, limits=SandboxLimits(timeout=5.0), **common)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET status='interrupted' WHERE id=?", (first.run.id,))
    with pytest.raises(ConfigError) as info:
        evaluate_code(problems, store=db, resume=True, limits=SandboxLimits(timeout=10.0), **common)
    assert "scorers.code_passes.limits.timeout: 5.0 then, 10.0 now" in str(info.value)
