"""Per-pair rouge_l and token_f1 compare tokens by text even where two tokens share a hash."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from rapidfuzz.distance import LCSseq
from tests.support.oracles import RougeScorer

from aieval.scorers import _lcs, _token_hashes, rouge_l, token_f1


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


_ROUGE = RougeScorer(["rougeL"], use_stemmer=False, tokenizer=_WhitespaceTokenizer())
_WORDS = [
    "a",
    "b",
    "c",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "é",
    "订单",
    "x1",
    "x2",
    "x3",
    "😀",
    "longer-token-than-sixteen-bytes",
]


def _pairs(seed: int, size: int, words: list[str] = _WORDS) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(size):
        ref = rng.choices(words, k=rng.randint(1, 30))
        pred = [t for t in ref if rng.random() < 0.7] + rng.choices(words, k=rng.randint(0, 6))
        pairs.append((" ".join(pred), " ".join(ref)))
    return pairs


def _counter_f1(pred_text: str, ref_text: str) -> float:
    pred, ref = pred_text.lower().split(), ref_text.lower().split()
    if not pred or not ref:
        return 0.0
    return 2.0 * sum((Counter(pred) & Counter(ref)).values()) / (len(pred) + len(ref))


def _check(pairs: list[tuple[str, str]]) -> None:
    for pred, ref in pairs:
        expected = _ROUGE.score(ref, pred)["rougeL"].fmeasure
        assert rouge_l(pred, ref).hex() == float(expected).hex(), (pred, ref)  # type: ignore[union-attr]
        assert token_f1(pred, ref) == _counter_f1(pred, ref), (pred, ref)


def test_rapidfuzz_compares_a_token_by_its_hash_value() -> None:
    """The premise: a string and an int of its hash() value are equal elements to rapidfuzz
    (a non-negative int below 2**61 - 1 hashes to itself), and a one-character string is its
    code point."""
    token = next(t for t in (f"token{i}" for i in range(1000)) if 0 <= hash(t) < 2**61 - 1)
    assert LCSseq.similarity([token], [hash(token)]) == 1
    assert LCSseq.similarity([token], [hash(token) + 1]) == 0
    assert LCSseq.similarity(["é"], [ord("é")]) == 1


def test_shared_values_fall_back_to_comparing_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every token given one value: only the first is admitted, every other pair holding a
    second token is compared by ids, and every score still equals the references."""
    monkeypatch.setattr(_token_hashes, "_admitted", _token_hashes._Admitted())
    monkeypatch.setattr(_token_hashes, "_values", lambda token: (0,))
    by_ids: list[int] = []
    exact = _lcs.lcs_by_ids

    def counted(pred: list[str], ref: list[str]) -> int:
        by_ids.append(1)
        return exact(pred, ref)

    monkeypatch.setattr(_lcs, "lcs_by_ids", counted)
    monkeypatch.setattr("aieval.scorers._text.lcs_by_ids", counted)
    pairs = _pairs(seed=1, size=200)
    _check(pairs)
    assert len(_token_hashes._admitted.tokens) == 1
    assert len(by_ids) >= 350  # nearly every pair, for both scorers


def test_a_full_set_starts_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_token_hashes, "_admitted", _token_hashes._Admitted())
    monkeypatch.setattr(_token_hashes, "_LIMIT", 5)
    first = _token_hashes._admitted
    _check(_pairs(seed=2, size=100, words=[*_WORDS, *(f"w{i}" for i in range(300))]))
    assert _token_hashes._admitted is not first
    assert len(_token_hashes._admitted.tokens) <= 4 + 36  # under the limit, then one pair's


def test_a_one_character_token_holds_its_code_point_and_its_hash() -> None:
    values = _token_hashes._values("é")
    assert values == (ord("é"), hash("é") & (2**64 - 1))
    assert _token_hashes._values("ab") == (hash("ab") & (2**64 - 1),)


def test_threads_sharing_the_admitted_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads admitting tokens while others swap in a fresh set: every score stays exact."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(_token_hashes, "_admitted", _token_hashes._Admitted())
    monkeypatch.setattr(_token_hashes, "_LIMIT", 50)
    pairs = _pairs(seed=3, size=400, words=[*_WORDS, *(f"w{i}" for i in range(500))])
    expected = [float(_ROUGE.score(r, p)["rougeL"].fmeasure) for p, r in pairs]
    with ThreadPoolExecutor(4) as pool:
        scores = list(pool.map(lambda pair: rouge_l(*pair), pairs))
    assert scores == expected
