"""The example workflows: definitions load, failing runs fail with the right gate, the CLI
shows grades and reasons for stored workflow runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aieval.workflows import evaluate_run, load_run, load_workflow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"
CASES = [
    ("code_review", "cr-001-clean", None),
    ("code_review", "cr-003-review-failed", "no_critical_step_failures"),
    ("code_review", "cr-004-schema-violation", "schema_contract_valid"),
    ("support_agent", "sa-001-refunded", None),
    ("support_agent", "sa-002-forbidden-tool", "no_forbidden_tool_invoked"),
    ("support_agent", "sa-003-bad-handoff", "handoff_graph_respected"),
    ("support_agent", "sa-004-bad-arguments", "tool_call_schema_valid"),
]


@pytest.mark.parametrize(
    ("workflow", "run_name", "failing_gate"), [pytest.param(*case, id=case[1]) for case in CASES]
)
def test_example_runs(workflow: str, run_name: str, failing_gate: str | None) -> None:
    definition = load_workflow(EXAMPLES / f"{workflow}.yaml")
    ev = evaluate_run(
        load_run(EXAMPLES / f"{workflow}_runs" / f"{run_name}.json"), workflow=definition
    )
    failed = {g.name for g in ev.gate_failures}
    if failing_gate is None:
        assert not failed and ev.passed
    else:
        assert failing_gate in failed and ev.grade == "F" and not ev.passed
        assert any(failing_gate in reason for reason in ev.reasons)


def test_cli_run_and_show_print_grades(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    base = [sys.executable, "-m", "aieval"]
    done = subprocess.run(
        [*base, "run", str(EXAMPLES / "code_review_eval.yaml"), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "graded runs" in done.stdout and "schema_contract_valid" in done.stdout
    shown = subprocess.run(
        [*base, "show", "code-review-workflow", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    payload = json.loads(shown.stdout)
    grades = {s["id"]: s["verdict"]["grade"] for s in payload["samples"]}
    assert grades["cr-004-schema-violation"] == "F"
    assert payload["run"]["metrics"]["evaluation"]["runs"] == len(grades)
    table = subprocess.run(
        [*base, "show", "code-review-workflow", "--db", str(db), "--failed"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "cr-003-review-failed" in table.stdout and "cr-001-clean" not in table.stdout
