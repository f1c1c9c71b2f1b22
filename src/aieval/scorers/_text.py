"""Built-in text scorers: exact match, JSON validity, ROUGE-L F1 and token F1."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rapidfuzz.distance import LCSseq

from aieval.scorers._scorer import scorer

__all__ = ["exact_match", "json_valid", "rouge_l", "token_f1"]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


@scorer
def exact_match(prediction: str, expected: str) -> float:
    """1.0 when the trimmed prediction equals the trimmed expected answer, else 0.0.

    Example:
        >>> exact_match("  Paris ", "Paris")
        1.0
    """
    return 1.0 if _text(prediction).strip() == _text(expected).strip() else 0.0


@scorer
def json_valid(prediction: str, _expected: Any = None) -> float:
    """1.0 when the prediction parses as JSON, else 0.0.

    Example:
        >>> json_valid('{"a": 1}'), json_valid("{a: 1}")
        (1.0, 0.0)
    """
    try:
        json.loads(_text(prediction))
    except ValueError:
        return 0.0
    return 1.0


@scorer
def rouge_l(prediction: str, expected: str) -> float:
    """ROUGE-L F1 between prediction and expected, on whitespace tokens (case-sensitive).

    Equal to ``rouge_score``'s ``rougeL`` F-measure with a whitespace tokenizer and no stemming;
    0.0 when either side has no tokens.

    Example:
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 4)
        0.8333
    """
    pred = _text(prediction).split()
    ref = _text(expected).split()
    if not pred or not ref:
        return 0.0
    lcs = LCSseq.similarity(pred, ref)
    if lcs == 0:
        return 0.0
    return 2.0 * lcs / (len(pred) + len(ref))


@scorer
def token_f1(prediction: str, expected: str, *, case_sensitive: bool = False) -> float:
    """Order-independent token F1: harmonic mean of token precision and recall.

    Shared tokens count up to the smaller of their two multiplicities. Tokens are split on
    whitespace and lower-cased unless ``case_sensitive=True``. 0.0 when either side is empty.

    Example:
        >>> token_f1("the capital is paris", "paris is the capital")
        1.0
        >>> token_f1("the cat extra", "the cat")
        0.8
    """
    pred_text = _text(prediction)
    ref_text = _text(expected)
    if not case_sensitive:
        pred_text = pred_text.lower()
        ref_text = ref_text.lower()
    pred = pred_text.split()
    ref = ref_text.split()
    if not pred or not ref:
        return 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    return 2.0 * common / (len(pred) + len(ref))
