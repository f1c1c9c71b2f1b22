"""Invariants every built-in text scorer shares; a new built-in joins by being listed here."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aieval import Score
from aieval.errors import ScorerError
from aieval.scorers import Scorer, bleu, chrf, exact_match, json_valid, rouge_l, token_f1

ALL_SCORERS = [
    pytest.param(exact_match, id="exact_match"),
    pytest.param(json_valid, id="json_valid"),
    pytest.param(rouge_l, id="rouge_l"),
    pytest.param(token_f1, id="token_f1"),
    pytest.param(bleu, id="bleu"),
    pytest.param(chrf, id="chrf"),
]
# Compatibility modes of the built-ins (SQuAD, rouge-score): same invariants, other options.
MODES = [
    pytest.param(token_f1.with_options(normalize="squad"), id="token_f1-squad"),
    pytest.param(exact_match.with_options(normalize="squad"), id="exact_match-squad"),
    pytest.param(rouge_l.with_options(tokenizer="rouge_score"), id="rouge_l-rouge_score"),
    pytest.param(
        rouge_l.with_options(tokenizer="rouge_score", use_stemmer=True), id="rouge_l-stemmed"
    ),
]
WITH_MODES = [*ALL_SCORERS, *MODES]
SYMMETRIC = [
    pytest.param(rouge_l, id="rouge_l"),
    pytest.param(token_f1, id="token_f1"),
    MODES[0],
    MODES[2],
    MODES[3],
]
# Scorers that compare two texts, so a text compared with itself scores 1.0. (The SQuAD and
# rouge-score modes drop punctuation, so "!" against itself has no tokens left.)
REFERENCE_BASED = [p for p in ALL_SCORERS if p.id != "json_valid"]

_texts = st.text(max_size=60) | st.lists(
    st.sampled_from(["a", "B", "refund", "30", "заказ", "订单", "!", '"x"', "{}", "[1]"]),
    max_size=20,
).map(" ".join)


@pytest.mark.parametrize("metric", WITH_MODES)
@settings(max_examples=150, deadline=None)
@given(prediction=_texts, expected=_texts)
def test_scores_are_floats_in_unit_interval(metric: Scorer, prediction: str, expected: str) -> None:
    value = metric(prediction, expected)
    assert type(value) is float
    assert 0.0 <= value <= 1.0


@pytest.mark.parametrize("metric", SYMMETRIC)
@settings(max_examples=150, deadline=None)
@given(prediction=_texts, expected=_texts)
def test_symmetric_scorers_ignore_argument_order(
    metric: Scorer, prediction: str, expected: str
) -> None:
    assert metric(prediction, expected) == metric(expected, prediction)


@pytest.mark.parametrize("metric", REFERENCE_BASED)
@settings(max_examples=150, deadline=None)
@given(text=_texts.filter(lambda t: t.strip() != ""))
def test_non_empty_text_scores_one_against_itself(metric: Scorer, text: str) -> None:
    assert metric(text, text) == 1.0
    # A different object with the same content takes the same path as any other pair.
    assert metric(text, "".join(list(text))) == 1.0


@pytest.mark.parametrize("metric", SYMMETRIC)
@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        pytest.param("", "the order shipped", id="empty-prediction"),
        pytest.param("the order shipped", "", id="empty-expected"),
        pytest.param("", "", id="both-empty"),
        pytest.param(" \t\n", " \t\n", id="both-whitespace"),
        pytest.param("\u3000", "the order", id="ideographic-space"),
    ],
)
def test_overlap_scorers_give_zero_without_tokens(
    metric: Scorer, prediction: str, expected: str
) -> None:
    assert metric(prediction, expected) == 0.0


@pytest.mark.parametrize(
    ("prediction", "expected", "want"),
    [
        pytest.param("", "", 1.0, id="both-empty"),
        pytest.param("  ", "", 1.0, id="whitespace-trims-to-empty"),
        pytest.param("", "Paris", 0.0, id="empty-prediction"),
    ],
)
def test_exact_match_on_empty_text(prediction: str, expected: str, want: float) -> None:
    assert exact_match(prediction, expected) == want


def test_json_valid_rejects_empty_text() -> None:
    assert json_valid("", None) == 0.0
    assert json_valid("   ", None) == 0.0


def test_json_valid_scores_pathological_nesting_instead_of_raising() -> None:
    assert json_valid("[" * 100_000 + "]" * 100_000, None) == 0.0
    assert json_valid("[" * 50 + "]" * 50, None) == 1.0


@pytest.mark.parametrize("metric", WITH_MODES)
@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        pytest.param(None, "the order", id="none-prediction"),
        pytest.param(42, "42", id="int-prediction"),
        pytest.param({"a": 1}, "{'a': 1}", id="dict-prediction"),
        pytest.param(["a", "b"], ("a", "b"), id="sequences"),
        pytest.param(b"bytes", "bytes", id="bytes"),
    ],
)
def test_odd_input_is_scored_not_raised(metric: Scorer, prediction: Any, expected: Any) -> None:
    value = metric(prediction, expected)
    if isinstance(expected, tuple) and metric.fn is not json_valid.fn:
        # a sequence expected is several accepted answers, never the text of its str()
        assert isinstance(value, Score | float)
        value = value.value if isinstance(value, Score) else value
    assert value is not None and 0.0 <= value <= 1.0


@pytest.mark.parametrize("metric", WITH_MODES)
def test_none_prediction_is_treated_as_empty_text(metric: Scorer) -> None:
    assert metric(None, "the order") == metric("", "the order")


@pytest.mark.parametrize("metric", WITH_MODES)
@pytest.mark.parametrize("prediction", ["the order", "", None])
def test_none_expected_is_no_reference_never_empty_text(metric: Scorer, prediction: Any) -> None:
    if metric.fn is json_valid.fn:  # needs no reference
        assert metric(prediction, None) == metric(prediction, "")
        return
    with pytest.raises(ScorerError, match="no expected answer for this example"):
        metric(prediction, None)


@pytest.mark.parametrize("metric", WITH_MODES)
def test_non_string_input_is_compared_by_its_str(metric: Scorer) -> None:
    assert metric(42, "42") == metric("42", "42")
    assert metric(3.5, "3.5 kg") == metric("3.5", "3.5 kg")


@pytest.mark.parametrize("metric", REFERENCE_BASED)
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("您的订单已发货，预计三天内送达。", id="chinese"),
        pytest.param("Ваш заказ отправлен и прибудет через три дня.", id="russian"),
        pytest.param("Ihre Bestellung ist unterwegs – Lieferung in 3 Tagen.", id="german"),
        pytest.param("طلبك في الطريق", id="arabic"),
        pytest.param("😀 👍🏽 ok", id="emoji"),
    ],
)
def test_identical_unicode_text_scores_one(metric: Scorer, text: str) -> None:
    assert metric(text, text) == 1.0


@pytest.mark.parametrize("metric", WITH_MODES)
async def test_runner_path_matches_direct_call(metric: Scorer) -> None:
    # Scorer.score is what the runner calls; it must agree with calling the scorer directly.
    pairs = [("the order shipped", "the order has shipped"), ('{"a": 1}', '{"a": 1}'), ("", "x")]
    for prediction, expected in pairs:
        score = await metric.score(prediction, expected)
        assert score.value == metric(prediction, expected)


def test_builtins_are_registered_under_their_names() -> None:
    from aieval.scorers import get_scorer

    for param in ALL_SCORERS:
        metric = param.values[0]
        assert isinstance(metric, Scorer)
        assert get_scorer(metric.name) is metric
