"""The typed view of a workflow verdict's stored detail, and its readers' use of it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from tests.support.workflows import DEFINITION, make_run

from aieval.core import (
    AgentDetail,
    SampleRecord,
    StepDetail,
    ToolCallDetail,
    Verdict,
    WeightCoverage,
    WorkflowDetail,
)
from aieval.workflows import evaluate_run
from aieval.workflows._verdict import workflow_verdict

SRC = Path(__file__).resolve().parents[2] / "src" / "aieval"
READERS = ("report", "cli", "workflows")


def test_the_view_reads_a_stored_evaluation() -> None:
    run = make_run(
        overall_status="failed",
        steps=[
            {
                "step_name": "review",
                "agent_role": "reviewer",
                "retry_count": 2,
                "metadata": {
                    "duration_s": 1.5,
                    "input_tokens": 10,
                    "output_tokens": 4,
                    "tool_calls": [{"name": "grep", "executed": False}, "lint"],
                    "model_calls": [{}],
                    "scores": {"quality": 0.5},
                },
            }
        ],
    )
    evaluation = evaluate_run(run, workflow=DEFINITION)
    detail = workflow_verdict(evaluation, SampleRecord("a", 0, None)).workflow_detail
    assert detail is not None
    assert (detail.workflow, detail.profile, detail.passed, detail.grade) == (
        "review",
        "B",
        False,
        "F",
    )
    assert detail.hard_gates == evaluation.hard_gates and detail.hard_gates
    assert detail.reasons == tuple(evaluation.reasons) and detail.why == detail.reasons
    assert detail.missing_criteria == tuple(m["name"] for m in evaluation.missing_criteria)
    assert detail.coverage == WeightCoverage(1.0, ())
    assert detail.latency_s == 5.0 and detail.slo["latency_s"] == (
        evaluation.efficiency["slo"]["latency_s"]["good"],
        evaluation.efficiency["slo"]["latency_s"]["bad"],
    )
    assert detail.retry_amplification == evaluation.efficiency["raw"]["retry_amplification"]
    assert detail.agents == {
        "reviewer": AgentDetail(1, 0, 2, {"quality": 0.5}, duration_s=1.5),
    }
    assert detail.steps == (
        StepDetail(
            "review",
            "reviewer",
            "success",
            1.5,
            1,
            10,
            4,
            14,
            (ToolCallDetail("grep", False, None), ToolCallDetail("lint")),
        ),
    )


def test_odd_stored_fields_read_as_empty_never_as_a_crash() -> None:
    odd: dict[str, Any] = {
        "passed": 1,
        "grade": None,
        "hard_gates": ["x"],
        "missing_criteria": [{"name": "a"}, {"reason": "no name"}, "b"],
        "score_coverage": {"share": True, "unscored": ["c"]},
        "efficiency": {"raw": {"latency_s": "slow"}, "slo": {"latency_s": {"good": 1}}},
        "agents": {"x": {"steps": 2.7, "failures": True, "tokens": float("inf"), "scores": []}},
        "step_details": [{"name": "s", "model_calls": None}, 3],
        "placement": ["band A"],
    }
    detail = WorkflowDetail.of(odd)
    assert detail == WorkflowDetail(
        passed=True,
        missing_criteria=("a",),
        coverage=WeightCoverage(None, ("c",)),
        agents={"x": AgentDetail(steps=2, failures=1)},
        steps=(StepDetail("s"),),
        placement=("band A",),
    )
    assert detail.why == ("band A",)
    assert Verdict(True).workflow_detail is None
    assert Verdict(True, workflow=[1]).workflow_detail is None  # type: ignore[arg-type]


def _workflow_reads(file: Path) -> list[str]:
    """Where ``file`` reads a verdict's ``workflow`` other than as a whole: ``x.verdict.workflow``
    or ``verdict.workflow`` used anywhere but an ``is (not) None`` test or a JSON output value."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "workflow"):
            continue
        owner = node.value
        named = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if named != "verdict":
            continue
        parent = parents[node]
        if isinstance(parent, ast.IfExp):  # `None if ... else verdict.workflow`
            parent = parents[parent]
        whole = isinstance(parent, ast.Dict) or (
            isinstance(parent, ast.Compare)
            and all(isinstance(op, ast.Is | ast.IsNot) for op in parent.ops)
        )
        if not whole:
            found.append(f"{file.relative_to(SRC)}:{node.lineno}")
    return found


def test_report_cli_and_workflows_read_the_workflow_detail_typed() -> None:
    files = [f for package in READERS for f in sorted((SRC / package).rglob("*.py"))]
    assert len(files) > 40
    assert [where for f in files for where in _workflow_reads(f)] == []
