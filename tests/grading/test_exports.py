import doctest
import importlib

import pytest

import aieval.grading

MODULES = ["_formulas", "_gates", "_grade", "_profile", "_rubric", "_tiebreak", "__init__"]


def test_all_is_sorted_and_resolves() -> None:
    names = aieval.grading.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(aieval.grading, name) is not None
    for required in [
        "normalize",
        "adjusted_norm",
        "grade",
        "CriterionScore",
        "GateResult",
        "load_rubric",
        "load_profile",
        "register_formula",
        "formulas",
        "register_gate",
        "get_gate",
        "gate_names",
        "evaluate_gates",
        "tie_break",
        "Rubric",
        "Criterion",
        "Profile",
        "validate_rubric_files",
        "default_floor_category",
    ]:
        assert required in names


@pytest.mark.parametrize("module", [pytest.param(m, id=m) for m in MODULES])
def test_doctests(module: str) -> None:
    name = "aieval.grading" if module == "__init__" else f"aieval.grading.{module}"
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
