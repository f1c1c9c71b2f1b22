"""Criterion categories select default floors: compared case-insensitively, and an unknown
category is refused with the nearest known one, never graded without its floor."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aieval.errors import ConfigError, RubricError
from aieval.grading import (
    CriterionScore,
    default_floor_category,
    grade,
    load_profile,
    load_rubric,
    validate_rubric_files,
)


def _grade(category: str) -> object:
    score = CriterionScore(
        name="acc", raw_score=0.69, formula_id="zero_one", weight=1.0, category=category
    )
    return grade(hard_gates={}, required_gates=(), criteria=[score])


@pytest.mark.parametrize("category", ["Correctness", "CORRECTNESS", " correctness "])
def test_a_category_in_another_case_gets_its_floor(category: str) -> None:
    assert default_floor_category("foo", category) == "correctness"
    g = _grade(category)
    assert [f.criterion for f in g.floor_failures] == ["acc"]  # type: ignore[attr-defined]
    assert g.criteria[0].category == "correctness"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("category", "hint"),
    [
        pytest.param("corectness", "did you mean correctness?", id="misspelt"),
        pytest.param("Safty", "did you mean safety?", id="misspelt-capital"),
        pytest.param("style", "known categories: correctness, safety, validation", id="other"),
    ],
)
def test_an_unknown_category_is_refused(category: str, hint: str) -> None:
    with pytest.raises(ConfigError, match=rf"criterion 'acc'.*{category!r}.*{hint}"):
        _grade(category)
    with pytest.raises(ConfigError, match=hint):
        default_floor_category("foo", category)


def test_a_category_of_the_profile_floors_is_known() -> None:
    floors = {"correctness": 0.7, "faithfulness": 0.9}
    assert default_floor_category("x", "Faithfulness", floors) == "faithfulness"
    score = CriterionScore("x", 0.85, category="faithfulness")
    g = grade(hard_gates={}, required_gates=(), criteria=[score], default_floors=floors)
    assert [f.criterion for f in g.floor_failures] == ["x"]


def test_a_category_must_be_text() -> None:
    with pytest.raises(ConfigError, match=r"criterion 'acc': category must be text"):
        CriterionScore("acc", 0.5, category=3)  # type: ignore[arg-type]


RUBRIC = """\
rubric_id: r
criteria:
  - name: accuracy
    category: {category}
    scale: [1, 5]
    weight: 1
    definition: Is it right?
    evidence_required: [a quote]
    anchors: {{"1": wrong, "2": barely, "3": partly, "4": mostly, "5": right}}
"""


@pytest.mark.parametrize("category", ["Correctness", "corectness"])
def test_rubric_categories_are_checked(tmp_path: Path, category: str) -> None:
    file = tmp_path / "r.yaml"
    file.write_text(RUBRIC.format(category=category))
    if category == "Correctness":
        rubric = load_rubric(file)
        assert rubric.criteria[0].category == "correctness"
        assert validate_rubric_files([file]) == [(str(file), None)]
        return
    with pytest.raises(RubricError, match=r"category.*'corectness'.*did you mean correctness\?"):
        load_rubric(file)
    problems = validate_rubric_files([file])
    assert problems[0][1] is not None and "did you mean correctness?" in problems[0][1]


def test_profile_criterion_categories_are_checked() -> None:
    data = load_profile("B").model_dump()
    data["criteria"][0]["category"] = "Safety"
    assert load_profile(data).criteria[0].category == "safety"
    data["criteria"][0]["category"] = "saftey"
    with pytest.raises(RubricError, match=r"did you mean safety\?"):
        load_profile(data)
    data["floors"]["saftey"] = 0.5  # a category the profile gives a floor is known
    assert load_profile(data).criteria[0].category == "saftey"
    assert yaml.safe_dump(data)  # the profile data stays plain
