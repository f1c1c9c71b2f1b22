from enum import Enum
from typing import Any

import pytest

from aieval.errors import ConfigError
from aieval.grading import (
    REQUIRED_GATES,
    GateResult,
    dataset_workflow_compatible,
    evaluate_gates,
    gate_names,
    get_gate,
    no_critical_step_failures,
    no_high_severity_hallucinations,
    no_sandbox_violations,
    overall_status_success,
    register_gate,
    required_outputs_present,
    schema_contract_valid,
)

# Aliased: pytest would collect names starting with "test" as test functions.
from aieval.grading import tests_fail_to_pass_all_green as f2p_gate
from aieval.grading import tests_pass_to_pass_threshold_met as p2p_gate

SECTION_3_GATES = [
    *REQUIRED_GATES,
    "tests_fail_to_pass_all_green",
    "tests_pass_to_pass_threshold_met",
    "citations_present_for_claims",
    "tool_call_schema_valid",
]


def test_spec_gates_exist_by_name() -> None:
    assert REQUIRED_GATES == (
        "required_outputs_present",
        "overall_status_success",
        "no_critical_step_failures",
        "schema_contract_valid",
        "dataset_workflow_compatible",
    )
    for name in SECTION_3_GATES:
        assert get_gate(name).name == name
    for name in REQUIRED_GATES:
        assert get_gate(name).check is not None


def test_unknown_gate_lists_known() -> None:
    with pytest.raises(ConfigError, match="required_outputs_present"):
        get_gate("no_such_gate")


# -- required_outputs_present ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outputs", "unresolved", "key"),
    [
        pytest.param({"summary": "ok"}, (), "missing", id="missing"),
        pytest.param({"review": None, "summary": "ok"}, (), "none", id="present-but-none"),
        pytest.param({"review": "x", "summary": "ok"}, ("review",), "unresolved", id="unresolved"),
        pytest.param(None, (), "missing", id="no-outputs-at-all"),
    ],
)
def test_required_outputs_never_pass_silently(
    outputs: dict[str, Any] | None, unresolved: tuple[str, ...], key: str
) -> None:
    result = required_outputs_present(
        outputs=outputs, required=["review", "summary"], unresolved=unresolved
    )
    assert not result.passed
    assert "review" in result.evidence[key]
    assert "review" in result.reason


def test_required_outputs_present_passes() -> None:
    result = required_outputs_present(
        outputs={"review": "", "summary": 0},
        required=["review", "summary"],
        unresolved=["optional_notes"],
    )
    assert result.passed and result.name == "required_outputs_present"


# -- status and steps -----------------------------------------------------------------------------


class Status(Enum):
    SUCCESS = "success"
    FAILED = "failed"


@pytest.mark.parametrize(
    ("status", "passed"),
    [
        pytest.param("success", True, id="success"),
        pytest.param("SUCCEEDED", True, id="case-insensitive"),
        pytest.param(Status.SUCCESS, True, id="enum"),
        pytest.param("failed", False, id="failed"),
        pytest.param("partial", False, id="partial"),
        pytest.param(None, False, id="none"),
    ],
)
def test_overall_status_success(status: Any, passed: bool) -> None:
    result = overall_status_success(status=status)
    assert result.passed is passed
    if not passed:
        assert "expected one of" in result.reason


def test_no_critical_step_failures() -> None:
    steps = [
        {"name": "parse", "status": "success"},
        {"name": "lint", "status": "failed", "critical": False},
        {"name": "review", "status": Status.FAILED},
        {"name": "summary", "status": "timeout"},
    ]
    result = no_critical_step_failures(steps=steps)
    assert not result.passed
    failed = [s["name"] for s in result.evidence["failed_steps"]]
    assert failed == ["review", "summary"]
    assert "review (failed)" in result.reason
    assert no_critical_step_failures(steps=steps[:2]).passed


# -- schema ---------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["review", "issues"],
    "properties": {
        "review": {"type": "string"},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["line"],
                "properties": {"line": {"type": "integer"}},
            },
        },
    },
}


def test_schema_contract_valid_names_failing_path() -> None:
    bad = {"review": "fine", "issues": [{"line": 3}, {"line": "seven"}]}
    result = schema_contract_valid(instance=bad, schema=SCHEMA)
    assert not result.passed
    assert "$.issues[1].line" in result.reason
    assert result.evidence["errors"][0]["path"] == "$.issues[1].line"
    good = {"review": "fine", "issues": [{"line": 3}]}
    assert schema_contract_valid(instance=good, schema=SCHEMA).passed


def test_schema_contract_missing_field() -> None:
    result = schema_contract_valid(instance={"review": "x"}, schema=SCHEMA)
    assert not result.passed and "issues" in result.reason


def test_invalid_schema_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="schema is invalid"):
        schema_contract_valid(instance={}, schema={"type": "no-such-type"})


# -- dataset compatibility ------------------------------------------------------------------------


def test_dataset_workflow_compatible_lists_missing_inputs() -> None:
    result = dataset_workflow_compatible(
        required_inputs=["code_file", "review_depth", "bug_report"],
        available={"code_file": "a.py", "review_depth": None},
    )
    assert not result.passed
    assert result.evidence["missing_inputs"] == ["review_depth", "bug_report"]
    ok = dataset_workflow_compatible(required_inputs=["a"], available=["a", "b"])
    assert ok.passed


# -- SWE ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passed", "total", "threshold", "want"),
    [
        pytest.param(4, 4, 1.0, True, id="all-green"),
        pytest.param(3, 4, 1.0, False, id="one-red"),
        pytest.param(0, 0, 1.0, False, id="no-tests-unverified"),
        pytest.param(3, 4, 0.75, True, id="threshold-overridden"),
    ],
)
def test_fail_to_pass_gate(passed: int, total: int, threshold: float, want: bool) -> None:
    result = f2p_gate(passed=passed, total=total, threshold=threshold)
    assert result.passed is want
    assert result.evidence["total"] == total


@pytest.mark.parametrize(
    ("passed", "total", "threshold", "want"),
    [
        pytest.param(95, 100, 0.95, True, id="exactly-0.95"),
        pytest.param(94, 100, 0.95, False, id="below"),
        pytest.param(0, 0, 0.95, True, id="nothing-to-regress"),
        pytest.param(94, 100, 0.90, True, id="threshold-overridden"),
    ],
)
def test_pass_to_pass_gate(passed: int, total: int, threshold: float, want: bool) -> None:
    result = p2p_gate(passed=passed, total=total, threshold=threshold)
    assert result.passed is want
    assert result.reason


def test_profile_gates_with_simple_checks() -> None:
    assert no_sandbox_violations(violations=[]).passed
    failed = no_sandbox_violations(violations=["network access to 10.0.0.1"])
    assert not failed.passed and "10.0.0.1" in failed.reason
    findings = [{"severity": "low", "claim": "a"}, {"severity": "HIGH", "claim": "b"}]
    result = no_high_severity_hallucinations(findings=findings)
    assert not result.passed and result.evidence["findings"] == [findings[1]]


# -- registry and evaluation ----------------------------------------------------------------------


def test_evaluate_gates_mixes_inputs_and_verdicts() -> None:
    results = evaluate_gates(
        [
            "overall_status_success",
            "schema_contract_valid",
            "dataset_workflow_compatible",
            "required_outputs_present",
        ],
        {
            "overall_status_success": {"status": "success"},
            "schema_contract_valid": GateResult("other_name", False, "bad"),
            "dataset_workflow_compatible": True,
        },
    )
    assert [r.name for r in results] == [
        "overall_status_success",
        "schema_contract_valid",
        "dataset_workflow_compatible",
        "required_outputs_present",
    ]
    assert [r.passed for r in results] == [True, False, True, False]
    assert "not evaluated" in results[3].reason


def test_gate_declared_without_check_fails_until_registered() -> None:
    from aieval.grading import _gates

    name = "declared_only_for_test"
    _gates._declare(name, "a gate whose check is registered later")
    (result,) = evaluate_gates([name], {name: {"claims": []}})
    assert not result.passed and "no check is registered" in result.reason


def test_objective_gates_are_registered_with_their_checks() -> None:
    import aieval.scorers  # noqa: F401  (registers the scorer-module gate checks)

    for name in (
        "citations_present_for_claims",
        "tool_call_schema_valid",
        "no_forbidden_tool_invoked",
        "handoff_graph_respected",
        "patch_applies",
    ):
        assert get_gate(name).check is not None, name
    (result,) = evaluate_gates(
        ["no_forbidden_tool_invoked"],
        {
            "no_forbidden_tool_invoked": {
                "calls": [{"name": "rm_rf", "arguments": "{}"}],
                "forbidden": ["rm_rf"],
            }
        },
    )
    assert not result.passed and "rm_rf" in result.reason


def test_register_gate_fills_a_declared_gate_and_refuses_silent_replace() -> None:
    name = "test_answer_nonempty"

    @register_gate(name, description="answer is not empty")
    def nonempty(*, text: str) -> GateResult:
        ok = bool(text.strip())
        return GateResult(name, ok, "" if ok else "empty answer")

    assert name in gate_names()
    assert get_gate(name).description == "answer is not empty"
    assert evaluate_gates([name], {name: {"text": "hi"}})[0].passed
    assert not evaluate_gates([name], {name: {"text": " "}})[0].passed
    with pytest.raises(ConfigError, match="already has a check"):
        register_gate(name, nonempty)
    register_gate(name, lambda *, text: True, replace=True)
    assert evaluate_gates([name], {name: {"text": ""}})[0].passed


def test_crashing_check_fails_its_gate() -> None:
    def boom(**_: Any) -> GateResult:
        raise RuntimeError("disk on fire")

    register_gate("test_boom", boom, replace=True)
    (result,) = evaluate_gates(["test_boom"], {"test_boom": {}})
    assert not result.passed and "disk on fire" in result.reason


def test_wrong_inputs_fail_the_gate_with_reason() -> None:
    (result,) = evaluate_gates(["overall_status_success"], {"overall_status_success": {"x": 1}})
    assert not result.passed and "TypeError" in result.reason


def test_unknown_gate_in_evaluation_fails() -> None:
    (result,) = evaluate_gates(["never_registered"], {"never_registered": {"a": 1}})
    assert not result.passed and "unknown gate" in result.reason
