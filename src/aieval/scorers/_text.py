"""Built-in text scorers: exact match, JSON validity, ROUGE-L F1 and token F1.

Every built-in takes ``(prediction, expected)``. ``None`` counts as empty text and any other
non-string value is compared by its ``str()``, so a scorer never raises on odd input.

``exact_match`` and ``token_f1`` take ``normalize="squad"`` to give the official SQuAD v1.1
script's EM and F1 (``expected`` may then be a list of accepted answers: the best one counts, as in
SQuAD); ``rouge_l`` takes ``tokenizer="rouge_score"`` (and ``use_stemmer=True``) to give the
``rouge-score`` package's ROUGE-L F-measure bit for bit.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from rapidfuzz.distance import LCSseq

from aieval.errors import ConfigError
from aieval.scorers._scorer import scorer
from aieval.scorers._tokens import (
    Normalization,
    check_normalize,
    rouge_score_tokens,
    squad_normalize,
)

__all__ = ["exact_match", "json_valid", "rouge_l", "token_f1"]

# Bound once: the per-pair cost of these scorers is a few microseconds, so attribute lookups show.
_lcs_length = LCSseq.similarity


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _answers(expected: Any) -> list[str]:
    """SQuAD-style references: a list (or tuple) of accepted answers, or one answer."""
    if isinstance(expected, list | tuple) and expected:
        return [_text(a) for a in expected]
    return [_text(expected)]


def _best(metric: Callable[[str, str], float], prediction: Any, expected: Any) -> float:
    pred = _text(prediction)
    return max(metric(pred, answer) for answer in _answers(expected))


@scorer
def exact_match(prediction: str, expected: str, *, normalize: Normalization = None) -> float:
    """1.0 when the trimmed prediction equals the trimmed expected answer, else 0.0.

    With ``normalize="squad"``, both sides are SQuAD-normalized first (lower case, no
    punctuation or articles, single spaces) and ``expected`` may list several accepted answers.

    Example:
        >>> exact_match("  Paris ", "Paris"), exact_match("Paris.", "paris")
        (1.0, 0.0)
        >>> exact_match("The Paris.", ["Lyon", "paris"], normalize="squad")
        1.0
    """
    if normalize is not None:
        check_normalize(normalize)
        return _best(_squad_em, prediction, expected)
    return 1.0 if _text(prediction).strip() == _text(expected).strip() else 0.0


def _squad_em(prediction: str, answer: str) -> float:
    return 1.0 if squad_normalize(prediction) == squad_normalize(answer) else 0.0


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
def rouge_l(
    prediction: str,
    expected: str,
    *,
    tokenizer: Literal["whitespace", "rouge_score"] = "whitespace",
    use_stemmer: bool = False,
) -> float:
    """ROUGE-L F1 between prediction and expected, on whitespace tokens (case-sensitive).

    Bit-for-bit equal to ``rouge_score``'s ``rougeL`` F-measure with a whitespace tokenizer
    and no stemming; 0.0 when either side has no tokens. With ``tokenizer="rouge_score"`` the
    text is tokenized as ``rouge-score`` does by default (lower case, ``a-z0-9`` runs only), and
    ``use_stemmer=True`` adds its Porter stemming (needs NLTK): equal to
    ``RougeScorer(["rougeL"], use_stemmer=...)`` bit for bit.

    Example:
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 4)
        0.8333
        >>> rouge_l("The cat!", "the cat", tokenizer="rouge_score")
        1.0
    """
    if tokenizer == "rouge_score":
        pred_tokens = rouge_score_tokens(_text(prediction), stem=use_stemmer)
        ref_tokens = rouge_score_tokens(_text(expected), stem=use_stemmer)
        if not pred_tokens or not ref_tokens:
            return 0.0
        return _f1(_lcs_length(pred_tokens, ref_tokens), len(pred_tokens), len(ref_tokens))
    if tokenizer != "whitespace" or use_stemmer:
        raise ConfigError(
            f"rouge_l: tokenizer={tokenizer!r}, use_stemmer={use_stemmer!r} is not supported; "
            "use tokenizer='whitespace' (no stemming) or tokenizer='rouge_score'"
        )
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
def token_f1(
    prediction: str,
    expected: str,
    *,
    case_sensitive: bool = False,
    normalize: Normalization = None,
) -> float:
    """Order-independent token F1: harmonic mean of token precision and recall.

    Shared tokens count up to the smaller of their two multiplicities. Tokens are split on
    whitespace and lower-cased unless ``case_sensitive=True``. 0.0 when either side is empty.
    With ``normalize="squad"`` it is the SQuAD v1.1 script's F1 (SQuAD normalization, best of
    several accepted answers when ``expected`` is a list).

    Example:
        >>> token_f1("the capital is paris", "paris is the capital")
        1.0
        >>> token_f1("the cat extra", "the cat")
        0.8
        >>> token_f1("Paris.", "Paris"), token_f1("Paris.", "Paris", normalize="squad")
        (0.0, 1.0)
    """
    if normalize is not None:
        check_normalize(normalize)
        if case_sensitive:
            raise ConfigError("token_f1: normalize='squad' lower-cases; drop case_sensitive=True")
        return _best(_squad_f1, prediction, expected)
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


def _squad_f1(prediction: str, answer: str) -> float:
    pred = squad_normalize(prediction).split()
    ref = squad_normalize(answer).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    # SQuAD v1.1 gives 0 when nothing is shared, including when both sides normalize to empty.
    return _f1(common, len(pred), len(ref)) if common else 0.0


def _f1(lcs: int, pred_len: int, ref_len: int) -> float:
    # rouge-score's exact arithmetic (precision, recall, then their harmonic mean), so scores
    # match it to the last bit rather than to within rounding.
    precision = lcs / pred_len
    recall = lcs / ref_len
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
