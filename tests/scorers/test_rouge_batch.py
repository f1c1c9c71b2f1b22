"""rouge_l.batch against per-pair rouge_l and rouge-score, and Scorer.batch's contract."""

from __future__ import annotations

import asyncio
import pickle
import random

import pytest
from tests.support.oracles import RougeScorer

from aieval import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import Scorer, exact_match, rouge_l


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


_ROUGE = RougeScorer(["rougeL"], use_stemmer=False, tokenizer=_WhitespaceTokenizer())

_WORDS = "the The order order. refund Refund! a is #A-1042 $4.99 30 days don't"
_OTHER_SCRIPTS = "заказ возврат 订单 退款 café naïve 😀 , -- é e\u0301 \U0001f600x"
_VOCAB = [*_WORDS.split(), *_OTHER_SCRIPTS.split()]
_WHITESPACE = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", "\r\n", "\x1c", "\u2029"]


def _text(rng: random.Random, tokens: list[str]) -> str:
    gaps = [rng.choice(_WHITESPACE) for _ in tokens]
    body = "".join(token + gap for token, gap in zip(tokens, gaps, strict=True))
    return rng.choice(["", " ", "\t"]) + body[: -len(gaps[-1])] if tokens else body


def _edited(rng: random.Random, ref: list[str]) -> list[str]:
    pred: list[str] = []
    for token in ref:
        roll = rng.random()
        if roll < 0.55:
            pred.append(token)
        elif roll < 0.7:
            pred.append(rng.choice(_VOCAB))
        elif roll < 0.85:
            pred.extend([token] * rng.randint(2, 4))  # repeated tokens
    return pred


def _corpus(seed: int, size: int, longest: int) -> list[tuple[str, str]]:
    """Random pairs: edited copies, unrelated texts, empty and blank sides, identical texts."""
    rng = random.Random(seed)
    pairs = []
    for i in range(size):
        ref = rng.choices(_VOCAB[: rng.randint(2, len(_VOCAB))], k=rng.randint(0, 60))
        kind = i % 10
        if kind == 0:
            pairs.append(("", _text(rng, ref)) if i % 20 else (_text(rng, ref), ""))
        elif kind == 1:
            pairs.append((rng.choice(["", " ", "\n\t", "\u3000"]), rng.choice(["", "  "])))
        elif kind == 2:
            same = _text(rng, ref)
            pairs.append((same, same))
        elif kind == 3:
            pairs.append((_text(rng, rng.choices(_VOCAB, k=rng.randint(1, 40))), _text(rng, ref)))
        else:
            pairs.append((_text(rng, _edited(rng, ref)), _text(rng, ref)))
    for _ in range(4):  # very long texts: several 64-token words of the bit-parallel LCS
        ref = rng.choices(_VOCAB, k=longest)
        pairs.append((_text(rng, _edited(rng, ref)), _text(rng, ref)))
    return pairs


def _bits(values: list[object]) -> list[str]:
    return [v.hex() if isinstance(v, float) else repr(v) for v in values]


def test_batch_equals_per_pair_and_rouge_score_bit_for_bit() -> None:
    pairs = _corpus(seed=28, size=2000, longest=1500)
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    batch = rouge_l.batch(preds, refs)
    per_pair = [rouge_l(p, r) for p, r in pairs]
    oracle = [float(_ROUGE.score(r, p)["rougeL"].fmeasure) for p, r in pairs]
    assert _bits(batch) == _bits(per_pair)
    assert _bits(batch) == _bits(oracle)
    assert 0.0 < sum(batch) < len(batch)  # the corpus has partial matches, not only 0 and 1


def test_batch_on_very_long_texts_equals_per_pair() -> None:
    pairs = _corpus(seed=7, size=20, longest=20_000)
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    assert _bits(rouge_l.batch(preds, refs)) == _bits([rouge_l(p, r) for p, r in pairs])


def test_a_bad_row_is_that_rows_error_and_the_others_are_scored() -> None:
    preds = ["the cat sat", None, "a b", 42, "x", "paris"]
    refs = ["the cat sat", "x", None, "42", {"a": 1}, ["Lyon", "paris"]]
    results = rouge_l.batch(preds, refs, errors="return")
    assert results[:2] == [1.0, 0.0]
    assert isinstance(results[2], ScorerError)
    assert "no expected answer" in str(results[2])
    assert results[3] == 1.0
    assert isinstance(results[4], ScorerError)
    assert "dict" in str(results[4])
    assert isinstance(results[5], Score)
    assert results[5] == rouge_l("paris", ["Lyon", "paris"])


def test_errors_raise_names_the_first_bad_row() -> None:
    with pytest.raises(ScorerError, match=r"^row 1: scorer 'rouge_l': no expected answer"):
        rouge_l.batch(["a", "b", "c"], ["a", None, None])


def test_options_and_the_rouge_score_tokenizer_batch_as_per_pair() -> None:
    compatible = rouge_l.with_options(tokenizer="rouge_score")
    assert compatible.batch_fn is rouge_l.batch_fn
    pairs = _corpus(seed=3, size=300, longest=300)
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    assert _bits(compatible.batch(preds, refs)) == _bits([compatible(p, r) for p, r in pairs])
    with pytest.raises(ConfigError, match="tokenizer='nltk'"):
        rouge_l.with_options(tokenizer="nltk").batch(["a"], ["a"])


def test_unequal_lengths_and_unknown_errors_mode_are_refused() -> None:
    with pytest.raises(ConfigError, match="2 predictions and 1 expected"):
        rouge_l.batch(["a", "b"], ["a"])
    with pytest.raises(ConfigError, match="errors='ignore'"):
        rouge_l.batch(["a"], ["a"], errors="ignore")  # type: ignore[arg-type]


def test_a_scorer_without_batch_implementation_is_called_per_row() -> None:
    def shouty(prediction: str, expected: str) -> float:
        if prediction == "boom":
            raise ValueError("no boom")
        return 1.0 if prediction.upper() == expected else 0.0

    plain = Scorer(shouty)
    assert plain.batch_fn is None
    results = plain.batch(["hi", "boom", "x"], ["HI", "", "Y"], errors="return")
    assert results[0] == 1.0 and results[2] == 0.0
    assert isinstance(results[1], ScorerError)
    assert str(results[1]) == "scorer 'shouty' raised ValueError: no boom"
    assert exact_match.batch(["Paris ", "Lyon"], ["Paris", "Paris"]) == [1.0, 0.0]


def test_async_and_context_scorers_are_refused() -> None:
    async def later(prediction: str, expected: str) -> float:
        await asyncio.sleep(0)
        return 1.0

    def with_example(prediction: str, expected: str, *, example: object) -> float:
        return 1.0

    for built in (Scorer(later), Scorer(with_example)):
        with pytest.raises(ConfigError, match="score it with score"):
            built.batch(["a"], ["a"])


def test_pickled_scorer_keeps_its_batch_implementation() -> None:
    compatible = rouge_l.with_options(tokenizer="rouge_score", name="rouge_compat")
    restored = pickle.loads(pickle.dumps(compatible))
    assert restored.batch_fn is rouge_l.batch_fn
    assert restored.batch(["The cat!"], ["the cat"]) == [1.0]
