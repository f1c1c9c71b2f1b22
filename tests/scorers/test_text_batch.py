"""exact_match, token_f1 and json_valid batches give exactly the per-pair results, row by row."""

from __future__ import annotations

import random
from typing import Any

import pytest

from aieval import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import Scorer, exact_match, json_valid, token_f1

_TOKENS = [
    "the", "The", "THE", "a", "An", "Paris", "paris.", "refund!", "#A-1042", "$4.99", "30",
    "don't", "заказ", "ЗАКАЗ", "订单", "café", "CAFÉ", "e\u0301", "ǅ", "ß", "SS", "😀", "İ",
    "{", "}", "[1,", "2]", '"k":', "null", "\udc80",
]  # fmt: skip
_GAPS = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", "\x1c", "\u2029", ""]


class _Text(str):
    """A str subclass: not the fast path, scored as the per-pair function does."""


def _text(rng: random.Random) -> str:
    words = rng.choices(_TOKENS, k=rng.randint(0, 8))
    body = "".join(w + rng.choice(_GAPS) for w in words)
    return rng.choice(["", " ", "\t"]) + body


def _value(rng: random.Random, pool: list[str]) -> Any:
    roll = rng.random()
    if roll < 0.7:
        return rng.choice(pool)
    return rng.choice(
        [
            None,
            42,
            3.5,
            True,
            [rng.choice(pool), rng.choice(pool)],
            (rng.choice(pool),),
            {rng.choice(pool), "x"},
            frozenset(),
            [],
            {"not": "text"},
            [["nested"]],
            _Text(rng.choice(pool)),
            '{"a": [1, 2]}',
            "[" * 5000,  # nesting past the JSON parser's limit
        ]
    )


def _rows(seed: int, size: int) -> tuple[list[Any], list[Any]]:
    rng = random.Random(seed)
    pool = [_text(rng) for _ in range(60)]
    preds = [_value(rng, pool) for _ in range(size)]
    # a third of the rows identical up to case, spacing or punctuation
    refs = [
        (p.upper() if i % 2 else f" {p} ") if i % 3 == 0 and isinstance(p, str) else
        _value(rng, pool)
        for i, p in enumerate(preds)
    ]  # fmt: skip
    return preds, refs


def _per_row(original: Scorer) -> Scorer:
    """The same scorer without its batch implementation: one call per row."""
    return Scorer(original.fn, name=original.name, options=dict(original.options))


def _same(got: list[Any], want: list[Any]) -> None:
    assert len(got) == len(want)
    for row, (a, b) in enumerate(zip(got, want, strict=True)):
        if isinstance(b, ScorerError):
            assert isinstance(a, ScorerError) and str(a) == str(b), row
        else:
            assert type(a) is type(b) and a == b, row  # 1.0 is not True, a Score stays a Score


_VARIANTS = [
    exact_match,
    exact_match.with_options(normalize="squad"),
    token_f1,
    token_f1.with_options(case_sensitive=True),
    token_f1.with_options(normalize="squad"),
    json_valid,
]


@pytest.mark.parametrize("variant", _VARIANTS, ids=repr)
@pytest.mark.parametrize("seed", range(4))
def test_batch_equals_one_call_per_row(variant: Scorer, seed: int) -> None:
    preds, refs = _rows(seed, 600)
    assert variant.batch_fn is not None
    got = variant.batch(preds, refs, errors="return")
    _same(got, _per_row(variant).batch(preds, refs, errors="return"))
    # and the rows of two plain strings alone: the loop without per-row checks
    plain = [(p, r) for p, r in zip(preds, refs, strict=True) if type(p) is type(r) is str]
    ps, rs = [p for p, _ in plain], [r for _, r in plain]
    _same(variant.batch(ps, rs), _per_row(variant).batch(ps, rs))


@pytest.mark.parametrize("variant", _VARIANTS, ids=repr)
def test_edge_rows(variant: Scorer) -> None:
    preds = ["", " ", "\u3000", "Paris", "The Paris.", None, 7, "a b", "A B", "\udc80 x"]
    refs = ["", "", "", " Paris ", ["Lyon", "paris"], "x", "7", "b a", "a b", "\udc80 X"]
    _same(variant.batch(preds, refs, errors="return"), _per_row(variant).batch(preds, refs))


def test_a_bad_row_is_that_rows_error_only() -> None:
    preds = ["yes", "yes", "yes", "yes"]
    refs = ["yes", {"a": 1}, None, [["x"]]]
    for metric in (exact_match, token_f1):
        got = metric.batch(preds, refs, errors="return")
        assert got[0] == 1.0
        assert all(isinstance(error, ScorerError) for error in got[1:])
        assert "dict" in str(got[1]) and "no expected answer" in str(got[2])
        with pytest.raises(ScorerError, match="row 1: "):
            metric.batch(preds, refs)


def test_a_list_of_answers_names_the_one_that_counted() -> None:
    (score,) = token_f1.batch(["refund in 30 days"], [["no", "30 days in refund"]])
    assert isinstance(score, Score) and score.value == 1.0
    assert score.metadata == {"accepted_answers": 2, "best_answer": 1}


def test_unsupported_options_are_the_callers_error_once() -> None:
    with pytest.raises(ConfigError, match="normalize='nfc'"):
        exact_match.with_options(normalize="nfc").batch(["a"], ["a"])
    with pytest.raises(ConfigError, match="case_sensitive"):
        token_f1.with_options(normalize="squad", case_sensitive=True).batch(["a"], ["a"])
