"""The workflow grader builds each verdict from the typed evaluation, as the stored-row adapter
reads the same evaluation back."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from tests.support.workflows import DEFINITION, SCORES, make_run

from aieval import run
from aieval.core import SampleRecord, ScoreRecord
from aieval.core._stored import evaluation_verdict
from aieval.workflows import evaluate_run
from aieval.workflows._verdict import workflow_verdict

INPUTS = {"code_file": "a.py"}
SRC = Path(__file__).resolve().parents[2] / "src" / "aieval"

CASES: dict[str, dict[str, Any]] = {
    "passes": {"run": make_run()},
    "gate": {"run": make_run(overall_status="failed")},
    "gate not enforced": {"run": make_run(overall_status="failed"), "enforce_hard_gates": False},
    "floor": {"run": make_run(), "scores": {**SCORES, "correctness": 2}},
    "below threshold": {
        "run": make_run(),
        "scores": {**dict.fromkeys(SCORES, 1), "correctness": 4, "tool_data_precision": 0.2},
    },
    "missing": {"run": make_run(metadata={"scores": {"correctness": 5}, "inputs": INPUTS})},
    "efficiency only": {"run": make_run(metadata={"inputs": INPUTS})},
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_the_verdict_is_the_one_the_stored_evaluation_gives(case: dict[str, Any]) -> None:
    evaluation = evaluate_run(workflow=DEFINITION, **case)
    record = SampleRecord(
        "a", 0, None, scores={"judge": ScoreRecord(None, error="judge down")}, error=None
    )
    verdict = workflow_verdict(evaluation, record)
    stored = evaluation.to_dict()
    assert verdict == evaluation_verdict(stored, record, evaluation.passed)
    assert verdict.to_dict() == evaluation_verdict(stored, record, evaluation.passed).to_dict()
    assert verdict.workflow == stored and "graded" not in stored


def _calls(name: str) -> set[str]:
    """The modules under ``src/aieval`` that name ``name`` (imported or called)."""
    found = set()
    for file in SRC.rglob("*.py"):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        if name in names:
            found.add(file.relative_to(SRC).as_posix())
    return found


def test_only_the_stored_row_adapter_reads_an_evaluation_dict_into_a_verdict() -> None:
    assert _calls("evaluation_verdict") == {"core/_stored.py"}


def test_each_sample_stores_its_runs_steps_from_the_targets_output() -> None:
    rows = [{"id": "a", "input": INPUTS, "run": make_run()}, {"id": "b", "input": INPUTS}]
    result = run(name="wf", dataset=rows, scorers=[], workflow=DEFINITION, store=False)
    stored = {s.id: s.extra for s in result.samples}
    assert stored["b"] == {"workflow_run": None}
    steps = stored["a"]["workflow_run"]["steps"]
    assert [s["name"] for s in steps] == ["parse", "lint", "review"]
    assert {s.verdict.grader for s in result.samples} == {"workflow"}
