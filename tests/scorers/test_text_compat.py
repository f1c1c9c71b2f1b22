"""Compatibility modes against the tools users compare with: SQuAD v1.1, rouge-score, sacrebleu.

``_official_*`` below is a faithful transcription of the normalization, F1 and EM functions of
the official SQuAD v1.1 evaluation script (``evaluate-v1.1.py``), used as the oracle.
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter

import pytest
import sacrebleu
from tests.support.oracles import RougeScorer

from aieval.errors import ConfigError
from aieval.scorers import bleu, chrf, exact_match, rouge_l, token_f1


def _official_normalize_answer(s: str) -> str:
    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text: str) -> str:
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def _official_f1_score(prediction: str, ground_truth: str) -> float:
    prediction_tokens = _official_normalize_answer(prediction).split()
    ground_truth_tokens = _official_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def _official_exact_match_score(prediction: str, ground_truth: str) -> bool:
    return _official_normalize_answer(prediction) == _official_normalize_answer(ground_truth)


# Answers like SQuAD's: names, dates, numbers, articles, punctuation, case and spacing noise.
_WORDS = [
    "the",
    "The",
    "a",
    "an",
    "A",
    "Paris",
    "paris",
    "Paris.",
    "Denver",
    "Broncos",
    "broncos,",
    "1990",
    "1,990",
    "$4.99",
    "Eiffel-Tower",
    "tower's",
    "(left)",
    '"quoted"',
    "Beyoncé",
    "beyonce",
    "naïve",
    "50%",
    "an",
    "apple",
    "theatre",
    "anthem",
    "Santa",
    "Clara,",
    "California",
    "Super",
    "Bowl",
    "50",
    "Carolina",
    "Panthers",
]
_SPACES = [" ", "  ", "\t", "\n", "\u00a0"]


def _answer(rng: random.Random) -> str:
    n = rng.randint(0, 6)
    words = [rng.choice(_WORDS) for _ in range(n)]
    return "".join(w + rng.choice(_SPACES) for w in words).strip(rng.choice(["", " "]))


def _pairs(seed: int, size: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(size):
        gold = _answer(rng)
        pred = gold if rng.random() < 0.2 else _answer(rng)
        if rng.random() < 0.3:  # a near miss: the gold answer with extra or missing words
            pred = gold + " " + rng.choice(_WORDS)
        out.append((pred, gold))
    return out


SQUAD_PAIRS = _pairs(seed=11, size=400)


def test_squad_mode_equals_the_official_script_on_generated_pairs() -> None:
    for pred, gold in SQUAD_PAIRS:
        assert token_f1(pred, gold, normalize="squad") == float(_official_f1_score(pred, gold))
        want = 1.0 if _official_exact_match_score(pred, gold) else 0.0
        assert exact_match(pred, gold, normalize="squad") == want
    # The pairs exercise both sides of the normalization, not only trivial cases.
    differs = sum(token_f1(p, g) != token_f1(p, g, normalize="squad") for p, g in SQUAD_PAIRS)
    assert differs > 50


def test_squad_mode_takes_the_best_of_several_answers() -> None:
    golds = ["Denver Broncos", "the Broncos", "Broncos"]
    pred = "The Denver Broncos."
    want_f1 = max(_official_f1_score(pred, g) for g in golds)
    assert token_f1(pred, golds, normalize="squad") == want_f1 == 1.0
    assert exact_match("broncos!", golds, normalize="squad") == 1.0


def test_seed_defaults_are_unchanged() -> None:
    assert token_f1("Paris.", "Paris") == 0.0 and exact_match("Paris.", "Paris") == 0.0


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: token_f1("a", "a", normalize="nfkc"), id="unknown-normalize"),
        pytest.param(
            lambda: token_f1("a", "a", normalize="squad", case_sensitive=True), id="case-clash"
        ),
        pytest.param(lambda: rouge_l("a", "a", tokenizer="spacy"), id="unknown-tokenizer"),
        pytest.param(lambda: rouge_l("a", "a", use_stemmer=True), id="stem-needs-rouge-score"),
    ],
)
def test_bad_options_are_refused(call: object) -> None:
    with pytest.raises(ConfigError):
        call()  # type: ignore[operator]


_ROUGE_TEXT = [
    "The",
    "runners",
    "were",
    "running",
    "quickly,",
    "and",
    "they",
    "ran",
    "past",
    "3",
    "cafés!",
    "Jumping",
    "jumped",
    "jumps",
    "généralement",
    "naïve",
    '"quotes"',
    "it's",
    "O'Brien's",
    "e-mail",
    "2024-05-01",
    "Ünïcödé",
    "İstanbul",
]


def _rouge_pairs(seed: int, size: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(size):
        ref = [rng.choice(_ROUGE_TEXT) for _ in range(rng.randint(0, 25))]
        pred = [w for w in ref if rng.random() > 0.3] + [rng.choice(_ROUGE_TEXT)]
        rng.shuffle(pred) if rng.random() < 0.3 else None
        out.append((" ".join(pred), " ".join(ref)))
    return out


@pytest.mark.parametrize("stem", [False, True], ids=["no-stemmer", "stemmer"])
def test_rouge_score_mode_equals_rouge_score_bit_for_bit(stem: bool) -> None:
    oracle = RougeScorer(["rougeL"], use_stemmer=stem)
    for pred, ref in _rouge_pairs(seed=5 + stem, size=300):
        want = oracle.score(ref, pred)["rougeL"].fmeasure
        assert rouge_l(pred, ref, tokenizer="rouge_score", use_stemmer=stem) == want


_MT = [
    ("The cat sat on the mat.", ["The cat is sitting on the mat."]),
    ("Il pleut des cordes aujourd'hui", ["Il pleut à verse aujourd'hui", "Il pleut fort"]),
    ("", ["nothing here"]),
    ("交通 非常 拥挤", ["交通非常拥挤"]),
    ("completely unrelated words", ["the cat sat"]),
]


def _unit(score: float) -> float:
    return min(1.0, score / 100)  # sacrebleu can overshoot 100 by an ulp


@pytest.mark.parametrize(("hyp", "refs"), _MT)
def test_bleu_and_chrf_equal_sacrebleu(hyp: str, refs: list[str]) -> None:
    expected = refs if len(refs) > 1 else refs[0]
    assert bleu(hyp, expected) == _unit(sacrebleu.sentence_bleu(hyp, refs).score)
    assert chrf(hyp, expected) == _unit(sacrebleu.sentence_chrf(hyp, refs).score)
    plus = _unit(sacrebleu.sentence_chrf(hyp, refs, word_order=2).score)
    assert chrf(hyp, expected, word_order=2) == plus
    zh = _unit(sacrebleu.sentence_bleu(hyp, refs, tokenize="zh").score)
    assert bleu(hyp, expected, tokenize="zh") == zh


def test_an_ulp_over_100_is_reported_as_one() -> None:
    assert sacrebleu.sentence_bleu("0", ["0"]).score > 100
    assert bleu("0", "0") == 1.0


def test_an_unknown_bleu_tokenizer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="bleu"):
        bleu("a", "a", tokenize="klingon")
