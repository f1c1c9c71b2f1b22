import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval import _yaml as yaml_limits
from aieval.errors import RubricError
from aieval.grading import (
    REQUIRED_GATES,
    Rubric,
    grade,
    load_rubric,
    normalize,
    validate_rubric_files,
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "rubrics" / "fullstack_generation_v1.yaml"

SECTION_7 = """\
rubric_id: fullstack_generation_v1
version: 1
criteria:
  - name: correctness
    scale: [1, 5]
    weight: 0.35
    critical_floor: 3
    definition: "Output satisfies functional requirements and constraints."
    evidence_required:
      - "Requirement-to-output mapping"
      - "No contradiction with input spec"
    anchors:
      "1": "Major requirement failures"
      "2": "Multiple significant errors"
      "3": "Minimum acceptable correctness"
      "4": "Accurate with minor issues"
      "5": "Fully correct and robust"
"""

WORKFLOW = """\
name: code_review
version: "1.0"
capabilities:
  inputs: [code_file, review_depth]
  outputs: [review, summary]
evaluation:
  rubric_id: code_review_v1
  scoring_profile: B
  criteria:
    - name: correctness_rubric
      definition: Review output correctness and requirement alignment.
      evidence_required:
        - Requirement-to-review mapping
      scale:
        "1": Major requirement failures
        "2": Multiple significant errors
        "3": Minimum acceptable correctness
        "4": Accurate with minor issues
        "5": Fully correct and robust
      weight: 0.35
      critical_floor: 0.70
      formula_id: zero_one
    - name: documentation
      definition: Clarity of final summary/documentation.
      evidence_required: [Readable summary]
      scale:
        "1": Unclear and incomplete
        "2": Hard to follow
        "3": Adequate clarity
        "4": Clear and structured
        "5": Excellent clarity
      weight: 0.15
      formula_id: zero_one
steps:
  - name: review_code
    agent: tier2_reviewer
"""


def write(tmp_path: Path, text: str, name: str = "rubric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_section_7_example_loads_with_raw_floor(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, SECTION_7))
    (crit,) = rubric.criteria
    assert rubric.rubric_id == "fullstack_generation_v1" and rubric.version == "1"
    assert crit.scale == (1, 5) and crit.formula_id == "likert_1_5"
    assert crit.critical_floor_raw == 3
    assert crit.critical_floor == normalize("likert_1_5", 3)
    assert sorted(crit.anchors) == ["1", "2", "3", "4", "5"]


def test_shipped_example_rubric_grades(tmp_path: Path) -> None:
    rubric = load_rubric(EXAMPLE)
    assert rubric.source == str(EXAMPLE)
    floors = {c.name: (c.critical_floor, c.critical_floor_raw) for c in rubric.criteria}
    assert floors["correctness"] == (normalize("likert_1_5", 3), 3)
    assert floors["security"] == (0.80, None)
    scores = {"correctness": 4, "security": 3, "completeness": 5, "code_quality": 4}
    g = grade(
        hard_gates=dict.fromkeys(REQUIRED_GATES, True), criteria=rubric.criterion_scores(scores)
    )
    # security 3 -> 0.5 misses its 0.80 floor: grade is capped and the run fails.
    assert [f.criterion for f in g.floor_failures] == ["security"]
    assert g.grade in "DF" and not g.passed
    assert validate_rubric_files([EXAMPLE]) == [(str(EXAMPLE), None)]


def test_workflow_evaluation_block_loads_as_is(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, WORKFLOW, "code_review.yaml"))
    assert rubric.rubric_id == "code_review_v1" and rubric.scoring_profile == "B"
    assert rubric.version == "1.0"
    first = rubric.criteria[0]
    assert first.formula_id == "zero_one" and first.critical_floor == 0.70
    assert first.critical_floor_raw is None
    assert first.scale == (1, 5) and first.anchors["3"] == "Minimum acceptable correctness"


def test_evaluation_block_weights_override(tmp_path: Path) -> None:
    data = yaml.safe_load(WORKFLOW)
    data["evaluation"]["weights"] = {"documentation": 0.65}
    rubric = load_rubric(data)
    assert rubric.criterion("documentation").weight == 0.65
    data["evaluation"]["weights"] = {"docs": 0.5}
    with pytest.raises(RubricError, match="unknown criteria docs"):
        load_rubric(data)


def test_model_dump_round_trips() -> None:
    rubric = load_rubric(EXAMPLE)
    assert Rubric.model_validate(rubric.model_dump()) == rubric


def base_data() -> dict[str, Any]:
    data = yaml.safe_load(SECTION_7)
    assert isinstance(data, dict)
    return data


def with_criterion(**changes: Any) -> dict[str, Any]:
    data = base_data()
    crit = data["criteria"][0]
    for key, value in changes.items():
        if value is ...:
            crit.pop(key, None)
        else:
            crit[key] = value
    return data


@pytest.mark.parametrize(
    ("changes", "scale_floor"),
    [
        pytest.param({"critical_floor": 4}, ("likert_1_5", 4), id="int-is-raw"),
        pytest.param({"critical_floor": 0.7}, None, id="decimal-is-normalized"),
        pytest.param({"critical_floor": {"raw": 3.5}}, ("likert_1_5", 3.5), id="explicit-raw"),
        pytest.param({"critical_floor": {"normalized": 1}}, None, id="explicit-normalized"),
        pytest.param(
            {
                "scale": [-2, 2],
                "critical_floor": 0,
                "anchors": {str(i): f"point {i}" for i in range(-2, 3)},
            },
            ("likert_neg2_2", 0),
            id="neg-scale-int-raw",
        ),
        pytest.param(
            {
                "scale": [0, 10],
                "critical_floor": 7,
                "anchors": {str(i): f"point {i}" for i in range(11)},
            },
            ("linear", 7),
            id="zero-ten-linear",
        ),
    ],
)
def test_floor_rule(changes: dict[str, Any], scale_floor: tuple[str, float] | None) -> None:
    crit = load_rubric(with_criterion(**changes)).criteria[0]
    written = changes["critical_floor"]
    if scale_floor is None:
        want = written["normalized"] if isinstance(written, dict) else written
        assert crit.critical_floor == want and crit.critical_floor_raw is None
    else:
        formula_id, raw = scale_floor
        assert crit.formula_id == formula_id
        assert crit.critical_floor == normalize(formula_id, raw, **crit.params)
        assert crit.critical_floor_raw == raw


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        pytest.param(
            with_criterion(definition=...),
            ["'correctness'", "'definition'", "is required"],
            id="missing-definition",
        ),
        pytest.param(
            with_criterion(evidence_required=[]), ["'evidence_required'"], id="empty-evidence"
        ),
        pytest.param(with_criterion(weight=-0.1), ["'weight'", "-0.1"], id="negative-weight"),
        pytest.param(with_criterion(weight="heavy"), ["'weight'", "heavy"], id="string-weight"),
        pytest.param(with_criterion(scale=[5, 1]), ["'scale'", "low < high"], id="scale-reversed"),
        pytest.param(
            with_criterion(scale="one to five"), ["'scale'", "low..high"], id="scale-text"
        ),
        pytest.param(
            with_criterion(anchors={"1": "a", "2": "b", "3": "c"}),
            ["'anchors'", "missing 4, 5"],
            id="anchors-missing",
        ),
        pytest.param(
            with_criterion(anchors={str(i): "x" for i in range(1, 7)}),
            ["'anchors'", "point 6 is outside"],
            id="anchor-out-of-scale",
        ),
        pytest.param(
            with_criterion(anchors={**{str(i): "x" for i in range(1, 6)}, "3": " "}),
            ["'anchors'", "empty description"],
            id="anchor-empty",
        ),
        pytest.param(
            with_criterion(formula_id="likert_1_7"),
            ["'formula_id'", "likert_1_7"],
            id="unknown-formula",
        ),
        pytest.param(with_criterion(wieght=1), ["'wieght'", "not a known field"], id="typo"),
        pytest.param(
            with_criterion(critical_floor=3.0),
            ["'critical_floor'", "{raw: 3.0}"],
            id="decimal-floor-above-one",
        ),
        pytest.param(
            with_criterion(critical_floor=7),
            ["'critical_floor'", "outside the scale"],
            id="raw-floor-outside-scale",
        ),
        pytest.param(
            with_criterion(critical_floor={"low": 3}),
            ["'critical_floor'", "{raw: x}"],
            id="floor-bad-mapping",
        ),
        pytest.param(
            with_criterion(critical_floor="high"), ["'critical_floor'", "number"], id="floor-string"
        ),
        pytest.param(
            with_criterion(formula_id="zero_one", critical_floor=3),
            ["'critical_floor'", "formula 'zero_one'"],
            id="raw-floor-wrong-formula",
        ),
        pytest.param(
            with_criterion(scale={"1": "a", "2": "b"}, anchors={"1": "a"}),
            ["'scale'", "leave out 'anchors'"],
            id="scale-map-and-anchors",
        ),
        pytest.param(
            with_criterion(scale={"low": "a", "high": "b"}, anchors=...),
            ["'scale'", "not a number"],
            id="scale-map-bad-keys",
        ),
        pytest.param({**base_data(), "rubric_id": ""}, ["'rubric_id'"], id="empty-rubric-id"),
        pytest.param(
            {"version": 1, "criteria": base_data()["criteria"]},
            ["'rubric_id'", "is required"],
            id="missing-rubric-id",
        ),
        pytest.param({**base_data(), "criteria": []}, ["'criteria'"], id="no-criteria"),
        pytest.param(
            {**base_data(), "criteria": base_data()["criteria"] * 2},
            ["duplicate criterion names: correctness"],
            id="duplicate-names",
        ),
    ],
)
def test_bad_fields_give_precise_errors(
    tmp_path: Path, data: dict[str, Any], fragments: list[str]
) -> None:
    path = write(tmp_path, yaml.safe_dump(copy.deepcopy(data)))
    with pytest.raises(RubricError) as info:
        load_rubric(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message


def test_multiple_problems_are_all_listed(tmp_path: Path) -> None:
    data = with_criterion(weight=-1, color="red")
    with pytest.raises(RubricError) as info:
        load_rubric(write(tmp_path, yaml.safe_dump(data)))
    assert "2 problems" in str(info.value)
    assert "'weight'" in str(info.value) and "'color'" in str(info.value)


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "rubric_id: x\ncriteria: [\n  - name: a\n")
    with pytest.raises(RubricError, match=r"line \d+, column \d+: invalid YAML"):
        load_rubric(path)


def test_top_level_must_be_mapping(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="top level must be a mapping"):
        load_rubric(write(tmp_path, "- a\n- b\n"))


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_limits, "MAX_BYTES", 100)
    with pytest.raises(RubricError, match="larger than 100"):
        load_rubric(write(tmp_path, SECTION_7))


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    with pytest.raises(RubricError, match="aliases"):
        load_rubric(write(tmp_path, "\n".join(lines) + "\n"))


def test_python_tags_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "rubric_id: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(RubricError, match="invalid YAML"):
        load_rubric(path)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="cannot read"):
        load_rubric(tmp_path / "missing.yaml")


def test_validate_rubric_files_reports_each_path(tmp_path: Path) -> None:
    good = write(tmp_path, SECTION_7, "good.yaml")
    bad = write(tmp_path, yaml.safe_dump(with_criterion(weight=-1)), "bad.yaml")
    results = validate_rubric_files([good, bad, str(tmp_path / "none.yaml")])
    assert [p for p, _ in results] == [str(good), str(bad), str(tmp_path / "none.yaml")]
    assert results[0][1] is None
    assert results[1][1] is not None and "'weight'" in results[1][1]
    assert results[2][1] is not None and "cannot read" in results[2][1]


def test_criterion_scores_must_match(tmp_path: Path) -> None:
    rubric = load_rubric(EXAMPLE)
    with pytest.raises(RubricError, match=r"missing: security.*unknown: style"):
        rubric.criterion_scores(
            {"correctness": 4, "completeness": 4, "code_quality": 4, "style": 3}
        )
