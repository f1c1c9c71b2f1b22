"""Grading: hard gates, the formula registry, deterministic grading, rubrics and profiles.

Example:
    >>> from aieval.grading import CriterionScore, grade, normalize
    >>> round(normalize("lower_is_better", 12.0, slo_good=8, slo_bad=30), 3)
    0.818
    >>> g = grade(hard_gates={"schema_contract_valid": False}, required_gates=(),
    ...           criteria=[CriterionScore("correctness", 5, "likert_1_5")])
    >>> g.grade, g.passed, g.weighted_score
    ('F', False, 100.0)
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports

if TYPE_CHECKING:
    from aieval.grading._coverage import coverage_percent
    from aieval.grading._formulas import (
        Formula,
        adjusted_norm,
        clamp,
        formulas,
        get_formula,
        normalize,
        register_formula,
    )
    from aieval.grading._gate_result import GateResult
    from aieval.grading._gates import (
        REQUIRED_GATES,
        Gate,
        GateCheck,
        answer_grounded_in_context,
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
        tests_fail_to_pass_all_green,
        tests_pass_to_pass_threshold_met,
    )
    from aieval.grading._grade import (
        BANDS,
        DEFAULT_FLOORS,
        CriterionResult,
        CriterionScore,
        FloorCheck,
        GradeResult,
        band,
        default_floor_category,
        grade,
        known_category,
    )
    from aieval.grading._profile import (
        BUILTIN_PROFILES,
        Profile,
        ProfileCriterion,
        SloBounds,
        load_profile,
        profile_for_family,
    )
    from aieval.grading._rubric import Criterion, Rubric, load_rubric, validate_rubric_files
    from aieval.grading._tiebreak import NEAR_EQUAL, RunStanding, TieBreak, tie_break

__all__ = [
    "BANDS",
    "BUILTIN_PROFILES",
    "DEFAULT_FLOORS",
    "NEAR_EQUAL",
    "REQUIRED_GATES",
    "Criterion",
    "CriterionResult",
    "CriterionScore",
    "FloorCheck",
    "Formula",
    "Gate",
    "GateCheck",
    "GateResult",
    "GradeResult",
    "Profile",
    "ProfileCriterion",
    "Rubric",
    "RunStanding",
    "SloBounds",
    "TieBreak",
    "adjusted_norm",
    "answer_grounded_in_context",
    "band",
    "clamp",
    "coverage_percent",
    "dataset_workflow_compatible",
    "default_floor_category",
    "evaluate_gates",
    "formulas",
    "gate_names",
    "get_formula",
    "get_gate",
    "grade",
    "known_category",
    "load_profile",
    "load_rubric",
    "no_critical_step_failures",
    "no_high_severity_hallucinations",
    "no_sandbox_violations",
    "normalize",
    "overall_status_success",
    "profile_for_family",
    "register_formula",
    "register_gate",
    "required_outputs_present",
    "schema_contract_valid",
    "tests_fail_to_pass_all_green",
    "tests_pass_to_pass_threshold_met",
    "tie_break",
    "validate_rubric_files",
]

_EXPORTS = {
    "Formula": "aieval.grading._formulas",
    "adjusted_norm": "aieval.grading._formulas",
    "clamp": "aieval.grading._formulas",
    "formulas": "aieval.grading._formulas",
    "get_formula": "aieval.grading._formulas",
    "normalize": "aieval.grading._formulas",
    "register_formula": "aieval.grading._formulas",
    "GateResult": "aieval.grading._gate_result",
    "REQUIRED_GATES": "aieval.grading._gates",
    "Gate": "aieval.grading._gates",
    "GateCheck": "aieval.grading._gates",
    "answer_grounded_in_context": "aieval.grading._gates",
    "dataset_workflow_compatible": "aieval.grading._gates",
    "evaluate_gates": "aieval.grading._gates",
    "gate_names": "aieval.grading._gates",
    "get_gate": "aieval.grading._gates",
    "no_critical_step_failures": "aieval.grading._gates",
    "no_high_severity_hallucinations": "aieval.grading._gates",
    "no_sandbox_violations": "aieval.grading._gates",
    "overall_status_success": "aieval.grading._gates",
    "register_gate": "aieval.grading._gates",
    "required_outputs_present": "aieval.grading._gates",
    "schema_contract_valid": "aieval.grading._gates",
    "tests_fail_to_pass_all_green": "aieval.grading._gates",
    "tests_pass_to_pass_threshold_met": "aieval.grading._gates",
    "coverage_percent": "aieval.grading._coverage",
    "BANDS": "aieval.grading._grade",
    "DEFAULT_FLOORS": "aieval.grading._grade",
    "CriterionResult": "aieval.grading._grade",
    "CriterionScore": "aieval.grading._grade",
    "FloorCheck": "aieval.grading._grade",
    "GradeResult": "aieval.grading._grade",
    "band": "aieval.grading._grade",
    "default_floor_category": "aieval.grading._grade",
    "grade": "aieval.grading._grade",
    "known_category": "aieval.grading._grade",
    "BUILTIN_PROFILES": "aieval.grading._profile",
    "Profile": "aieval.grading._profile",
    "ProfileCriterion": "aieval.grading._profile",
    "SloBounds": "aieval.grading._profile",
    "load_profile": "aieval.grading._profile",
    "profile_for_family": "aieval.grading._profile",
    "Criterion": "aieval.grading._rubric",
    "Rubric": "aieval.grading._rubric",
    "load_rubric": "aieval.grading._rubric",
    "validate_rubric_files": "aieval.grading._rubric",
    "NEAR_EQUAL": "aieval.grading._tiebreak",
    "RunStanding": "aieval.grading._tiebreak",
    "TieBreak": "aieval.grading._tiebreak",
    "tie_break": "aieval.grading._tiebreak",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
