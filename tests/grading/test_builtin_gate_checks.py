"""Declared gates whose checks live with the scorers work without importing aieval.scorers
(each fresh-process test starts a new interpreter, so nothing is imported beforehand)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from aieval.core import BUILTIN, load_plugin
from aieval.grading import _gates

ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run in a new interpreter from the project root (nothing imported beforehand)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_every_declared_gate_without_a_check_is_a_gates_plugin_that_registers_it() -> None:
    plugins = BUILTIN[_gates.GATES_GROUP]
    assert len(plugins) == 6
    assert set(plugins) <= set(_gates._REGISTRY)
    for name, reference in plugins.items():
        loaded = load_plugin(_gates.GATES_GROUP, name)
        assert callable(loaded), reference
        assert _gates.get_gate(name).check is loaded, name


def test_a_profile_d_run_is_graded_in_a_fresh_process_without_importing_scorers() -> None:
    """The README's evaluate_run snippet, on the support agent example, in a new interpreter."""
    code = (
        "import sys\n"
        "from aieval.workflows import evaluate_run, load_run, load_workflow\n"
        "ev = evaluate_run(load_run('examples/workflows/support_agent_runs/sa-001-refunded.json'),"
        " workflow=load_workflow('examples/workflows/support_agent.yaml'))\n"
        "print(ev.grade, ev.passed, [g.reason for g in ev.gate_failures])\n"
    )
    done = _fresh(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "A True []"


def test_scorer_gates_work_without_importing_the_scorers_first() -> None:
    # a fresh interpreter, as a user who only imports aieval.grading (or aieval.workflows)
    code = """
import sys
from aieval.grading import evaluate_gates, get_gate
assert "aieval.scorers" not in sys.modules
(result,) = evaluate_gates(
    ["no_forbidden_tool_invoked"],
    {"no_forbidden_tool_invoked": {"calls": [{"name": "rm_rf"}], "forbidden": ["rm_rf"]}},
)
print(result.passed, result.reason)
print(get_gate("patch_applies").check is not None)
"""
    done = _fresh(code)
    assert done.returncode == 0, done.stderr
    verdict, registered = done.stdout.splitlines()
    assert verdict.startswith("False") and "rm_rf" in verdict and "not evaluated" not in verdict
    assert registered == "True"
