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
