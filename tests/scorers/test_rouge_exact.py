"""rouge_l compares tokens by their text: the vectorized path, its fallbacks, and rouge-score."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from tests.support.oracles import RougeScorer

from aieval.scorers import _lcs, rouge_l


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


_ROUGE = RougeScorer(["rougeL"], use_stemmer=False, tokenizer=_WhitespaceTokenizer())

# Tokens around the 8- and 16-byte words, longer ones that differ only late, NUL and control
# bytes, multi-byte UTF-8, a lone surrogate, emoji, and non-ASCII whitespace between them.
_TOKENS = [
    "a",
    "ab",
    "abcdefgh",
    "abcdefghi",
    "abcdefgh\x00",
    "abcdefghijklmnop",
    "abcdefghijklmnopq",
    "abcdefghijklmnopqr",
    "abcdefghijklmnopqrstuvwxyz-1",
    "abcdefghijklmnopqrstuvwxyz-2",
    "\x00",
    "a\x00",
    "\x01\x02",
    "\x7f",
    "é",
    "e\u0301",
    "ééééééééé",
    "\ud800",
    "\udfff",
    "😀",
    "😀😀😀😀😀",
    "订单退款",
    "http://example.com/a/very/long/path?with=query",
]
_GAPS = [" ", "\t", "\n", "\x0b", "\x1c", "\x1f", "\u00a0", "\u2028", "\u3000", "\x85", "  "]


def _text(rng: random.Random, tokens: list[str]) -> str:
    return "".join(token + rng.choice(_GAPS) for token in tokens)


def _pairs(seed: int, size: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(size):
        ref = rng.choices(_TOKENS, k=rng.randint(0, 40))
        pred = [t for t in ref if rng.random() < 0.7] + rng.choices(_TOKENS, k=rng.randint(0, 8))
        if rng.random() < 0.3:
            rng.shuffle(pred)
        pairs.append((_text(rng, pred), _text(rng, ref)))
    return pairs


def _expected(pairs: list[tuple[str, str]]) -> list[str]:
    return [float(_ROUGE.score(ref, pred)["rougeL"].fmeasure).hex() for pred, ref in pairs]


def _batch(pairs: list[tuple[str, str]]) -> list[str]:
    return [v.hex() for v in _lcs.rouge_l_many([p for p, _ in pairs], [r for _, r in pairs])]


def test_whitespace_is_what_str_split_splits_on() -> None:
    everything = "".join(map(chr, range(0x110000)))
    assert re.findall(r"\s", everything) == [c for c in everything if c.isspace()]
    assert [chr(b) for b in range(256) if _lcs._SOLID[b] == 0 and b != 32] == [
        chr(b) for b in range(128) if chr(b).isspace() and b != 32
    ]


def test_batch_and_per_pair_equal_rouge_score_on_awkward_tokens() -> None:
    pairs = _pairs(seed=1, size=600)
    expected = _expected(pairs)
    assert _batch(pairs) == expected
    assert [rouge_l(p, r).hex() for p, r in pairs] == expected  # type: ignore[union-attr]


def test_hash_collisions_fall_back_to_exact_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every hash 0, every token of a pair shares it: each pair is found and rescored."""
    monkeypatch.setattr(_lcs, "_MIX1", np.uint64(0))
    monkeypatch.setattr(_lcs, "_MIX2", np.uint64(0))
    pairs = _pairs(seed=2, size=200)
    rescored: list[int] = []
    one = _lcs._one

    def counted(pred: str, ref: str) -> float:
        rescored.append(1)
        return one(pred, ref)

    monkeypatch.setattr(_lcs, "_one", counted)
    assert _batch(pairs) == _expected(pairs)
    assert len(rescored) > 150


def test_chunks_and_oversized_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs split over many chunks, and pairs too large for one scored on their own."""
    monkeypatch.setattr(_lcs, "_MAX_BYTES", 300)
    monkeypatch.setattr(_lcs, "_MAX_PAIRS", 7)
    pairs = _pairs(seed=3, size=300)
    assert any(len(p.encode("utf-8", "surrogatepass")) > 300 for p, _ in pairs)
    assert _batch(pairs) == _expected(pairs)


def test_int_ids_when_a_reference_has_more_tokens_than_code_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_lcs, "_IDS", "".join(map(chr, range(5))))
    pairs = _pairs(seed=4, size=100)
    expected = _expected(pairs)
    assert [rouge_l(p, r).hex() for p, r in pairs] == expected  # type: ignore[union-attr]


def test_a_pair_of_more_distinct_tokens_than_code_points_below_the_surrogates() -> None:
    """60,000 distinct tokens: too many for a chunk's sort key, scored alone, still exact."""
    ref = [f"w{i}" for i in range(60_000)]
    pred = [*ref[::2], "x", "y"]
    pair = (" ".join(pred), " ".join(ref))
    precision, recall = 30_000 / 30_002, 30_000 / 60_000  # pred[:-2] is a subsequence of ref
    f1 = 2 * precision * recall / (precision + recall)  # rouge-score's arithmetic
    assert _batch([pair]) == [f1.hex()]
    assert rouge_l(*pair) == f1


def test_empty_and_blank_rows() -> None:
    pairs = [("", ""), (" ", "\u3000"), ("a", ""), ("", "a"), ("a b", "a b")]
    assert _lcs.rouge_l_many([p for p, _ in pairs], [r for _, r in pairs]) == [
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
    ]
    assert _lcs.rouge_l_many([], []) == []


def test_ids_past_the_surrogates_become_code_points_above_them() -> None:
    text = _lcs._as_text(np.array([0, 255, 0xD7FF, 0xD800, 0xFFFF], dtype=np.int64))
    assert [ord(c) for c in text] == [0, 255, 0xD7FF, 0xE000, 0x107FF]
    assert _lcs._as_text(np.array([3, 255], dtype=np.int64)) == "\x03\xff"


@pytest.mark.parametrize("distinct", [255, 256, 257, 300, 700])
def test_pairs_around_256_distinct_tokens_share_a_chunk_with_short_ones(distinct: int) -> None:
    """Ids taken mod 256 where a pair has at most 256 distinct tokens, counted from the pair's
    first id past that: both beside short pairs in one chunk, equal to rouge-score."""
    rng = random.Random(distinct)
    vocab = [f"t{i}" for i in range(distinct)]
    wide = []
    for _ in range(3):
        ref = rng.sample(vocab, distinct)
        pred = [t for t in ref if rng.random() < 0.8] + rng.choices(vocab, k=20)
        wide.append((" ".join(pred), " ".join(ref)))
    pairs = [*_pairs(seed=5, size=4), wide[0], *_pairs(seed=6, size=3), *wide[1:]]
    assert max(len(set(r.split())) for _, r in pairs) == distinct
    assert _batch(pairs) == _expected(pairs)
    assert _lcs.rouge_l_many([p for p, _ in wide], [r for _, r in wide])[0] < 1.0
