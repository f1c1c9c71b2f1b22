"""The ``evaluation:`` block's settings are applied or refused with the key's path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import run_main
from tests.support.workflows import DEFINITION, make_run

from aieval.errors import ConfigError, WorkflowError
from aieval.workflows import evaluate_run, load_workflow

# Profile B with these scores grades 78.5: passes the default mark of 70.
SCORES_78_5 = {"correctness": 4, "completeness": 4, "tool_data_precision": 0.8, "documentation": 4}


def run_78_5() -> dict[str, Any]:
    return make_run(metadata={"scores": dict(SCORES_78_5), "inputs": {"code_file": "a.py"}})


def definition(**evaluation: Any) -> dict[str, Any]:
    data = copy.deepcopy(DEFINITION)
    data["evaluation"] = {"scoring_profile": "B", **evaluation}
    return data


def test_the_run_passes_at_the_default_mark() -> None:
    ev = evaluate_run(run_78_5(), workflow=definition())
    assert ev.weighted_score == 78.5 and ev.passed and ev.pass_threshold == 70


def test_pass_threshold_beside_scoring_profile_is_applied() -> None:
    ev = evaluate_run(run_78_5(), workflow=definition(pass_threshold=95))
    assert ev.pass_threshold == 95 and not ev.passed


def test_weights_beside_scoring_profile_are_applied() -> None:
    weights = {
        "correctness": 0.0,
        "completeness": 0.0,
        "documentation": 0.0,
        "tool_data_precision": 1.0,
        "efficiency": 0.0,
    }
    ev = evaluate_run(run_78_5(), workflow=definition(weights=weights))
    assert ev.weighted_score == 80.0


def test_weight_for_an_unknown_criterion_is_refused_naming_the_file() -> None:
    wf = load_workflow(definition(weights={"corectness": 0.5}))
    with pytest.raises(ConfigError, match=r"evaluation.*weights.*unknown criteria: corectness"):
        evaluate_run(run_78_5(), workflow=wf)


@pytest.mark.parametrize(
    ("evaluation", "path", "hint"),
    [
        pytest.param(
            {"pass_treshold": 95},
            "evaluation.pass_treshold'",
            "did you mean pass_threshold?",
            id="top-level-typo",
        ),
        pytest.param(
            {"overrides": {"wieghts": {}}},
            "evaluation.overrides.wieghts'",
            "did you mean weights?",
            id="overrides-typo",
        ),
        pytest.param(
            {"budgets": {"token": 100}},
            "evaluation.budgets.token'",
            "did you mean tokens?",
            id="budget-typo",
        ),
        pytest.param(
            {"pass_threshold": 90, "overrides": {"pass_threshold": 80}},
            "evaluation.pass_threshold'",
            "keep one",
            id="given-twice",
        ),
    ],
)
def test_unknown_or_ambiguous_keys_are_refused_with_their_path(
    evaluation: dict[str, Any], path: str, hint: str
) -> None:
    with pytest.raises(WorkflowError) as caught:
        load_workflow(definition(**evaluation))
    assert path in str(caught.value) and hint in str(caught.value)


def test_inline_rubric_keeps_its_own_weights_and_threshold() -> None:
    criterion = {
        "name": "clarity",
        "scale": [1, 5],
        "weight": 1,
        "definition": "clear",
        "evidence_required": ["a quote"],
        "anchors": {str(i): f"level {i}" for i in range(1, 6)},
    }
    wf = load_workflow(definition(rubric_id="r", criteria=[criterion], pass_threshold=95))
    assert wf.evaluation.rubric is not None and wf.evaluation.rubric.pass_threshold == 95
    assert wf.evaluation.overrides == {}


def test_cli_run_applies_the_threshold_of_a_workflow_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(definition(pass_threshold=95)))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r1.json").write_text(json.dumps(run_78_5()))
    (tmp_path / "eval.yaml").write_text(
        yaml.safe_dump({"name": "wf", "dataset": "runs", "workflow": "wf.yaml"})
    )
    done = run_main(capsys, monkeypatch, "run", "eval.yaml", "--db", "s.db", "-q", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    show = run_main(capsys, monkeypatch, "show", "wf", "--db", "s.db", "--json", cwd=tmp_path)
    sample = json.loads(show.stdout)["samples"][0]
    assert sample["evaluation"]["weighted_score"] == 78.5
    assert sample["evaluation"]["pass_threshold"] == 95
    assert sample["passed"] is False


def test_inputs_for_a_gate_the_profile_does_not_run_are_refused() -> None:
    wf = load_workflow(definition(gates={"no_forbiden_tool_invoked": {"forbidden": ["rm"]}}))
    with pytest.raises(
        ConfigError,
        match=r"evaluation.gates.no_forbiden_tool_invoked'.*"
        r"profile B has no such gate",
    ):
        evaluate_run(run_78_5(), workflow=wf)


def test_inputs_for_a_gate_that_extra_gates_adds_are_accepted() -> None:
    """extra_gates adds a gate to profile B: its inputs are checked after the override."""
    wf = load_workflow(
        definition(
            extra_gates=["no_forbidden_tool_invoked"],
            gates={"no_forbidden_tool_invoked": {"forbidden": ["rm"]}},
        )
    )
    ev = evaluate_run(run_78_5(), workflow=wf)
    assert ev.hard_gates["no_forbidden_tool_invoked"] is True, ev.gate_failures
