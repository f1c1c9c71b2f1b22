"""A scorer's own threshold and weight: validated like every option, graded by the threshold
grader, stored with the run, and no change at all for a run that sets none."""

from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.core import GradeInput, ThresholdGrader
from aieval.core._records import SampleRecord, ScoreRecord
from aieval.core._threshold import threshold_verdict
from aieval.errors import ConfigError
from aieval.report import build_report, compare_runs
from aieval.runner import load_eval, parse_eval, run_eval
from aieval.runner._references import resolve_scorers, scorer_entry
from aieval.scorers import contains, exact_match, python, similar, token_f1
from aieval.store import Store

ROWS = [
    {"id": "a", "input": "q1", "prediction": "one two three", "expected": "one two three"},
    {"id": "b", "input": "q2", "prediction": "one two three four five six seven", "expected": "x"},
    {"id": "c", "input": "q3", "prediction": "one", "expected": "one two"},
]

#: The issue's numeric check: 1 / (words + 1) is 0.25, 0.125 and 0.5 on the rows above.
BREVITY = "1 / (len(output.split()) + 1)"


def test_with_options_sets_threshold_and_weight() -> None:
    f1 = token_f1.with_options(threshold=0.3, weight=2)
    assert (f1.threshold, f1.weight, f1.grading) == (0.3, 2.0, {"threshold": 0.3, "weight": 2.0})
    assert f1.options == {}  # not passed to the function
    assert f1("a b", "a b") == 1.0
    assert token_f1.grading == {} and token_f1.threshold is None and token_f1.weight == 1.0
    # bound later, kept by a further with_options and by a rename
    again = f1.with_options(name="f1")
    assert (again.name, again.grading) == ("f1", {"threshold": 0.3, "weight": 2.0})
    check = contains.with_options(value="x", threshold=0.2, name="has_x")
    assert (check.options, check.grading) == ({"value": "x"}, {"threshold": 0.2})


def test_a_scorer_that_takes_threshold_keeps_it() -> None:
    # similar's threshold is its cosine-similarity bound, as documented before
    bound = similar.with_options(threshold=0.9, weight=3)
    assert bound.options == {"threshold": 0.9}
    assert bound.grading == {"weight": 3.0}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threshold": 1.5}, r"^token_f1\.threshold: must be in 0\.\.1 .*got 1\.5"),
        ({"threshold": -0.1}, r"^token_f1\.threshold: must be in 0\.\.1"),
        ({"threshold": math.nan}, r"^token_f1\.threshold: must be in 0\.\.1"),
        ({"threshold": "0.3"}, r"^token_f1\.threshold: must be a number"),
        ({"threshold": True}, r"^token_f1\.threshold: must be a number"),
        ({"weight": -1}, r"^token_f1\.weight: must be a finite number >= 0, got -1"),
        ({"weight": math.nan}, r"^token_f1\.weight: must be a finite number >= 0, got nan"),
        ({"weight": math.inf}, r"^token_f1\.weight: must be a finite number >= 0"),
        ({"weight": "2"}, r"^token_f1\.weight: must be a number >= 0"),
    ],
)
def test_a_bad_threshold_or_weight_is_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        token_f1.with_options(**options)
    with pytest.raises(ConfigError, match=message.replace("^", "")):
        resolve_scorers([{"token_f1": options}])


def test_an_eval_file_refuses_a_bad_entry_naming_it(tmp_path: Path) -> None:
    bad = {"contains": {"value": "x", "weight": -2}}
    config = parse_eval({"name": "bad", "dataset": {"rows": ROWS}, "scorers": [bad]})
    with pytest.raises(ConfigError, match=r"contains\.weight: must be a finite number >= 0"):
        run_eval(config, store=tmp_path / "runs.db")
    typo = {"contains": {"value": "x", "wieght": 2}}
    config = parse_eval({"name": "bad", "dataset": {"rows": ROWS}, "scorers": [typo]})
    with pytest.raises(ConfigError, match=r"scorers\.contains\.wieght: unknown key.*weight"):
        run_eval(config, store=tmp_path / "runs.db")


def test_the_issue_numeric_check_no_longer_fails_every_sample(tmp_path: Path) -> None:
    plain = run(
        name="brevity",
        dataset=ROWS,
        scorers=[python.with_options(expression=BREVITY)],
        store=tmp_path / "runs.db",
    )
    # 0.25, 0.125, 0.5 against the run-wide 0.5: only the one-word answer passes
    assert [s.passed for s in plain.samples] == [False, False, True]
    own = run(
        name="brevity",
        dataset=ROWS,
        scorers=[python.with_options(expression=BREVITY, threshold=0.2)],
        store=tmp_path / "runs.db",
    )
    assert [s.passed for s in own.samples] == [True, False, True]
    (reason,) = own.samples[1].verdict.reasons
    assert (reason.kind, reason.key) == ("threshold", "python")
    assert reason.text == "python scored 0.125, below its threshold 0.2"


def test_threshold_and_weight_from_yaml(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(
        f"""
name: graded
dataset: {{rows: {ROWS!r}}}
scorers:
  - exact_match
  - python: {{expression: "{BREVITY}", threshold: 0.1, weight: 3, name: brevity}}
settings: {{pass_threshold: 0.5}}
""",
        encoding="utf-8",
    )
    (result,) = run_eval(load_eval(tmp_path / "eval.yaml"), store=tmp_path / "runs.db")
    by_id = {s.id: s for s in result.samples}
    # a: exact 1, brevity 0.25 (>= 0.1): passes; weighted (1 + 3 x 0.25) / 4
    assert by_id["a"].passed is True
    assert by_id["a"].verdict.weighted_score == pytest.approx(100 * (1 + 0.75) / 4)
    assert by_id["a"].verdict.weights == {"brevity": 3.0}
    # b: exact 0 misses the run-wide 0.5; brevity 0.125 meets its own 0.1
    assert by_id["b"].passed is False
    assert [r.key for r in by_id["b"].verdict.reasons] == ["exact_match"]
    assert by_id["b"].verdict.reasons[0].text == "exact_match below the pass threshold 0.5"
    # stored with the run, and read back the same
    with Store(tmp_path / "runs.db") as db:
        row = db.get_run(result.id)
        assert row is not None
        stored = {e["name"]: e for e in row.config["scorers"]}
        assert stored["brevity"]["threshold"] == 0.1 and stored["brevity"]["weight"] == 3.0
        assert "threshold" not in stored["exact_match"] and "weight" not in stored["exact_match"]
        again = {s.id: s for s in db.iter_samples(result.id)}
        assert again["a"].verdict == by_id["a"].verdict
        report = build_report(db, result.id)
    assert report.pass_rate["passed"] == sum(s.passed for s in result.samples)


def test_no_grading_options_change_nothing_to_the_last_digit() -> None:
    scores = {"f1": ScoreRecord(0.1), "em": ScoreRecord(0.7), "x": ScoreRecord(0.30000000000000004)}
    record = SampleRecord(id="s", index=0, input="q", scores=scores)
    before = threshold_verdict(record, 0.5)
    values = [0.1, 0.7, 0.30000000000000004]
    assert before.weighted_score == 100.0 * sum(values) / len(values)
    assert before.to_dict().keys() == {
        "passed", "reasons", "weighted_score", "grade", "gates", "criteria", "grader", "workflow"
    }  # fmt: skip
    grader = ThresholdGrader(0.5)
    example = ROWS[0]
    from aieval.core import Example

    graded = grader.grade(GradeInput(record, Example(id="s", input=example["input"])))
    assert graded == before
    # weights of 1 are the plain mean too
    ones = threshold_verdict(record, 0.5, weights={"f1": 1.0, "em": 1.0})
    assert ones == before


def test_a_zero_weight_leaves_the_weighted_score_but_not_the_pass_rule() -> None:
    record = SampleRecord(
        id="s", index=0, input="q", scores={"f1": ScoreRecord(0.8), "lat": ScoreRecord(0.0)}
    )
    verdict = threshold_verdict(record, 0.5, weights={"lat": 0.0})
    assert verdict.weighted_score == pytest.approx(80.0)
    assert verdict.passed is False and [r.key for r in verdict.reasons] == ["lat"]
    nothing = threshold_verdict(record, 0.5, weights={"lat": 0.0, "f1": 0.0})
    assert nothing.weighted_score is None


def test_graded_scorers_travel_by_pickle_and_as_entries() -> None:
    f1 = token_f1.with_options(threshold=0.3, weight=2)
    back = pickle.loads(pickle.dumps(f1))
    assert (back.name, back.grading) == ("token_f1", {"threshold": 0.3, "weight": 2.0})
    # a built-in with only its grading is described by name and grading in the run's spec
    assert scorer_entry(f1, 0) == {"token_f1": {"threshold": 0.3, "weight": 2.0}}
    assert resolve_scorers([scorer_entry(f1, 0)])[0].grading == f1.grading
    assert scorer_entry(exact_match, 0) == "exact_match"


def test_a_run_level_scorer_cannot_take_a_row_check_name() -> None:
    with pytest.raises(ConfigError, match=r"scorers\[0\]: the name 'row:x' is kept"):
        resolve_scorers([exact_match.with_options(name="row:x")])


def test_compare_lists_a_changed_threshold(tmp_path: Path) -> None:
    db_path = tmp_path / "runs.db"
    base = run(name="cmp", dataset=ROWS, scorers=[token_f1], store=db_path)
    cand = run(
        name="cmp", dataset=ROWS, scorers=[token_f1.with_options(threshold=0.2)], store=db_path
    )
    with Store(db_path) as db:
        comparison = compare_runs(db, base.id, cand.id)
    text = " ".join(comparison.warnings) + " ".join(
        str(r.details) + r.reason for r in comparison.decision.rules
    )
    assert "token_f1: threshold unset in the baseline, 0.2 in the candidate" in text
