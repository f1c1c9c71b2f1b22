"""rouge_l and token_f1 against independent reference implementations."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.oracles import RougeScorer

from aieval.scorers import rouge_l, token_f1


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


_ROUGE = RougeScorer(["rougeL"], use_stemmer=False, tokenizer=_WhitespaceTokenizer())

# Few distinct tokens so random texts share many of them; mixed case, punctuation and scripts.
_WORDS = "the The order order. refund Refund! a is #A-1042 $4.99 30 days you can don't"
_OTHER_SCRIPTS = "заказ возврат 订单 退款 café naïve 😀 , -- é"
# The decomposed é is a different token from the composed one.
_VOCAB = [*_WORDS.split(), *_OTHER_SCRIPTS.split(), "e\u0301"]
_WHITESPACE = [" ", "  ", "\t", "\n", " \u00a0", "\u3000", "\r\n"]


def _reference_rouge_l(prediction: str, expected: str) -> float:
    return float(_ROUGE.score(expected, prediction)["rougeL"].fmeasure)


def _reference_token_f1(prediction: str, expected: str, *, keep_case: bool = False) -> float:
    if not keep_case:
        prediction, expected = prediction.lower(), expected.lower()
    pred = prediction.split()
    ref = expected.split()
    if not pred or not ref:
        return 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def _join(rng: random.Random, tokens: list[str]) -> str:
    parts = []
    for token in tokens:
        parts.append(token)
        parts.append(rng.choice(_WHITESPACE))
    return rng.choice(["", " "]) + "".join(parts[:-1])


def _corpus(seed: int, size: int) -> list[tuple[str, str]]:
    """Pairs of 20-200 tokens; the prediction is an edited copy of the reference."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(size):
        ref = rng.choices(_VOCAB, k=rng.randint(20, 200))
        pred = []
        for token in ref:
            roll = rng.random()
            if roll < 0.6:
                pred.append(token)
            elif roll < 0.75:
                pred.append(rng.choice(_VOCAB))
            elif roll < 0.9:
                pred.extend([token, token])  # repeats
        pairs.append((_join(rng, pred), _join(rng, ref)))
    return pairs


_CORPUS = _corpus(seed=20240611, size=60)
_texts = st.lists(st.sampled_from(_VOCAB) | st.text(min_size=1, max_size=4), max_size=30).map(
    " ".join
)


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [pytest.param(p, r, id=f"corpus-{i}") for i, (p, r) in enumerate(_CORPUS)],
)
def test_rouge_l_equals_rouge_score_on_corpus(prediction: str, expected: str) -> None:
    assert rouge_l(prediction, expected) == pytest.approx(
        _reference_rouge_l(prediction, expected), abs=1e-12
    )


@settings(max_examples=300, deadline=None)
@given(prediction=_texts, expected=_texts)
def test_rouge_l_equals_rouge_score_on_random_texts(prediction: str, expected: str) -> None:
    assert rouge_l(prediction, expected) == pytest.approx(
        _reference_rouge_l(prediction, expected), abs=1e-12
    )


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=40))
def test_rouge_l_equals_rouge_score_on_arbitrary_unicode(text: str) -> None:
    # Arbitrary code points exercise every whitespace character str.split knows.
    shifted = " ".join(reversed(text.split()))
    assert rouge_l(text, shifted) == pytest.approx(_reference_rouge_l(text, shifted), abs=1e-12)
    assert rouge_l(text, text) == pytest.approx(_reference_rouge_l(text, text), abs=1e-12)


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [pytest.param(p, r, id=f"corpus-{i}") for i, (p, r) in enumerate(_CORPUS[:20])],
)
def test_token_f1_equals_counter_reference_on_corpus(prediction: str, expected: str) -> None:
    assert token_f1(prediction, expected) == pytest.approx(
        _reference_token_f1(prediction, expected), abs=1e-12
    )


@settings(max_examples=300, deadline=None)
@given(prediction=_texts, expected=_texts)
def test_token_f1_equals_counter_reference_on_random_texts(prediction: str, expected: str) -> None:
    assert token_f1(prediction, expected) == pytest.approx(
        _reference_token_f1(prediction, expected), abs=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(prediction=_texts, expected=_texts)
def test_token_f1_case_sensitive_equals_counter_reference(prediction: str, expected: str) -> None:
    assert token_f1(prediction, expected, case_sensitive=True) == pytest.approx(
        _reference_token_f1(prediction, expected, keep_case=True), abs=1e-12
    )
