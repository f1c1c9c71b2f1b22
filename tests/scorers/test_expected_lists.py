"""A list ``expected`` is several accepted answers; a mapping is refused; neither is a str()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.oracles import RougeScorer

from aieval import Score, Store, run
from aieval.errors import ScorerError
from aieval.scorers import bleu, chrf, exact_match, rouge_l, token_f1

ANSWERS = ["Paris", "paris, France"]


def test_exact_match_accepts_any_listed_answer_and_says_which() -> None:
    found = exact_match(" paris, France ", ANSWERS)
    assert isinstance(found, Score) and found.value == 1.0
    assert found.reason == "best of 2 accepted answers: 'paris, France'"
    assert found.metadata == {"accepted_answers": 2, "best_answer": 1}
    missed = exact_match("Lyon", ANSWERS)
    assert isinstance(missed, Score) and missed.value == 0.0
    assert missed.metadata["best_answer"] == 0  # the first of equal bests
    # the list's own text is never an accepted answer
    assert exact_match(str(ANSWERS), ANSWERS).value == 0.0  # type: ignore[union-attr]
    assert exact_match("42", (41, 42)).value == 1.0  # type: ignore[union-attr]


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_token_f1_is_the_best_over_the_answers(case_sensitive: bool) -> None:
    prediction = "the capital is Paris"
    answers = ["Lyon is big", "Paris is the capital", "capital"]
    f1 = token_f1.with_options(case_sensitive=case_sensitive)
    singles = [f1(prediction, a) for a in answers]
    found = f1(prediction, answers)
    assert isinstance(found, Score) and found.value == max(singles) == 1.0
    assert found.metadata == {"accepted_answers": 3, "best_answer": 1}


@pytest.mark.parametrize("tokenizer", ["whitespace", "rouge_score"])
def test_rouge_l_over_references_equals_rouge_score_multi(tokenizer: str) -> None:
    prediction = "the cat sat on the mat"
    references = ["a dog ran", "the cat lay on the mat", "the cat"]
    found = rouge_l(prediction, references, tokenizer=tokenizer)
    assert isinstance(found, Score)
    oracle = RougeScorer(["rougeL"])
    want = oracle.score_multi(references, prediction)["rougeL"].fmeasure
    assert found.value == pytest.approx(want) and found.metadata["best_answer"] == 1


@pytest.mark.parametrize("metric", [exact_match, token_f1, rouge_l, bleu, chrf])
@pytest.mark.parametrize(
    ("expected", "message"),
    [
        pytest.param({"answer": "Paris"}, r"expected is a dict, which has no text", id="dict"),
        pytest.param([], r"expected is an empty list: no accepted answer", id="empty"),
        pytest.param(["Paris", ["Lyon"]], r"expected\[1\] is a list", id="nested"),
    ],
)
def test_a_mapping_or_an_empty_list_is_refused_by_name(
    metric: Any, expected: Any, message: str
) -> None:
    with pytest.raises(ScorerError, match=f"{metric.name}: {message}"):
        metric("Paris", expected)


def test_squad_mode_refuses_a_mapping_too() -> None:
    with pytest.raises(ScorerError, match="exact_match: expected is a dict"):
        exact_match("Paris", {"a": "Paris"}, normalize="squad")


def test_through_a_run_lists_score_and_mappings_are_sample_errors(tmp_path: Path) -> None:
    rows = [
        {"id": "list", "prompt": "capital?", "prediction": "paris", "expected": ["Paris", "paris"]},
        {"id": "dict", "prompt": "capital?", "prediction": "Paris", "expected": {"city": "Paris"}},
        {"id": "text", "prompt": "capital?", "prediction": "Paris", "expected": "Paris"},
    ]
    result = run(name="lists", dataset=rows, scorers=[exact_match, token_f1],
                 store=tmp_path / "runs.db")  # fmt: skip
    by_id = {s.id: s for s in result.samples}
    listed = by_id["list"].scores["exact_match"]
    assert listed.value == 1.0 and listed.reason == "best of 2 accepted answers: 'paris'"
    assert by_id["list"].passed
    errors = by_id["dict"].errors
    assert set(errors) == {"exact_match", "token_f1"}
    assert "exact_match: expected is a dict" in errors["exact_match"]
    assert not by_id["dict"].passed and result.error_count == 1
    assert by_id["text"].scores["exact_match"].value == 1.0
    stored = Store(tmp_path / "runs.db").get_sample(result.id, "list")
    assert stored.scores["exact_match"].metadata == {"accepted_answers": 2, "best_answer": 1}
