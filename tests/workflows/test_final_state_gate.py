"""``final_state_matches`` as a workflow gate: the run's ``final_state`` output against the row's
``expected_state`` (docs/tools.md "Final state")."""

from __future__ import annotations

import copy
from typing import Any

from tests.support.workflows import DEFINITION, make_run

from aieval.workflows import evaluate_run, load_workflow

STATE = {"tickets": [{"id": 7, "status": "closed", "updated": "2026-01-02"}]}


def _evaluate(state: Any, sample: dict[str, Any], **inputs: Any) -> Any:
    data = copy.deepcopy(DEFINITION)
    data["evaluation"] = {"scoring_profile": "B", "extra_gates": ["final_state_matches"]}
    if inputs:
        data["evaluation"]["gates"] = {"final_state_matches": inputs}
    run = make_run(final_output={"report": {"issues": [3, 9]}, "final_state": state})
    return evaluate_run(run, workflow=load_workflow(data), sample={"code_file": "a.py", **sample})


def test_the_gate_holds_the_runs_final_state_against_the_rows_expected_state() -> None:
    expected = {"tickets": [{"id": 7, "status": "closed", "updated": "2026-01-01"}]}
    passed = _evaluate(STATE, {"expected_state": expected}, ignore=["/tickets/*/updated"])
    assert passed.hard_gates["final_state_matches"] is True, passed.gate_failures
    failed = _evaluate(STATE, {"expected_state": expected})
    assert failed.hard_gates["final_state_matches"] is False
    (gate,) = [g for g in failed.gate_failures if g.name == "final_state_matches"]
    assert '~ /tickets/0/updated:\n    -"2026-01-01"\n    +"2026-01-02"' in gate.reason
    assert gate.evidence["state_diff"]["changed"][0]["path"] == "/tickets/0/updated"
    assert failed.grade == "F"
    # the row may loosen its own expectation (data), as the definition may
    loose = {"expected_state": expected, "state_match": {"ignore": ["/tickets/0/updated"]}}
    assert _evaluate(STATE, loose).hard_gates["final_state_matches"] is True


def test_a_run_without_a_final_state_or_a_row_without_an_expected_one_fails_the_gate() -> None:
    no_state = _evaluate(None, {"expected_state": STATE})
    assert no_state.hard_gates["final_state_matches"] is False
    assert any("recorded no final state" in g.reason for g in no_state.gate_failures)
    no_expected = _evaluate(STATE, {})
    assert no_expected.hard_gates["final_state_matches"] is False
    assert any("not evaluated" in g.reason for g in no_expected.gate_failures)
