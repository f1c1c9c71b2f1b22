"""Built-in text scorers: exact match, JSON validity, ROUGE-L F1 and token F1.

Every built-in takes ``(prediction, expected)``. ``None`` counts as empty text and any other
non-string value is compared by its ``str()``, so a scorer never raises on odd input.
"""

from __future__ import annotations

import json
from typing import Any

from rapidfuzz.distance import LCSseq

from aieval.scorers._scorer import scorer

__all__ = ["exact_match", "json_valid", "rouge_l", "token_f1"]

# Bound once: the per-pair cost of these scorers is a few microseconds, so attribute lookups show.
_lcs_length = LCSseq.similarity


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
    except (ValueError, RecursionError):
        # Nesting deeper than the parser's recursion limit is not usable JSON either.
        return 0.0
    return 1.0


@scorer
def rouge_l(prediction: str, expected: str) -> float:
    """ROUGE-L F1 between prediction and expected, on whitespace tokens (case-sensitive).

    Bit-for-bit equal to ``rouge_score``'s ``rougeL`` F-measure with a whitespace tokenizer
    and no stemming; 0.0 when either side has no tokens.

    Example:
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 4)
        0.8333
    """
    pred_text = _text(prediction)
    ref_text = _text(expected)
    if pred_text == ref_text:
        # Same text, same tokens: skip tokenizing; only an all-whitespace text scores 0.0.
        return 1.0 if pred_text and not pred_text.isspace() else 0.0
    pred = pred_text.split()
    ref = ref_text.split()
    if not pred or not ref:
        return 0.0
    return _f1(_lcs_length(pred, ref), len(pred), len(ref))


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
    # The LCS of two sorted token lists is the size of their multiset intersection (any common
    # sub-multiset, sorted, is a subsequence of both); rapidfuzz's C++ LCS beats two Counters.
    pred.sort()
    ref.sort()
    common = _lcs_length(pred, ref)
    return 2.0 * common / (len(pred) + len(ref))


def _f1(lcs: int, pred_len: int, ref_len: int) -> float:
    # rouge-score's exact arithmetic (precision, recall, then their harmonic mean), so scores
    # match it to the last bit rather than to within rounding.
    precision = lcs / pred_len
    recall = lcs / ref_len
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
