"""Built-in text scorers: exact match, JSON validity, ROUGE-L F1 and token F1.

Every built-in takes ``(prediction, expected)``. A ``None`` prediction counts as empty text and a
number is compared by its ``str()``. A missing ``expected`` (``None``: the row has none) is a
:class:`~aieval.errors.ScorerError` for every scorer that compares with it (that sample's error,
"no expected answer for this example"), never a comparison with ``""``; ``json_valid`` needs
none. A list (tuple, set) ``expected`` holds several accepted answers: the
best one counts (the SQuAD convention, and rouge-score's multi-reference rule), and the result is
a :class:`~aieval.Score` whose reason and metadata name the answer that counted. A mapping, a
nested list or an empty list is a :class:`~aieval.errors.ScorerError` naming the type (that
sample's error), never compared as the text of its ``str()``.

``exact_match`` and ``token_f1`` take ``normalize="squad"`` to give the official SQuAD v1.1
script's EM and F1 (a plain float: the best over a list of accepted answers, as the script
computes it); ``rouge_l`` takes ``tokenizer="rouge_score"`` (and ``use_stemmer=True``) to give the
``rouge-score`` package's ROUGE-L F-measure bit for bit.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal

from rapidfuzz.distance import LCSseq

from aieval._types import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers._answers import as_best_of_score, best_of, expected_texts, text_of
from aieval.scorers._lcs import f_measure, lcs_by_ids, lcs_of_tokens, rouge_l_many
from aieval.scorers._scorer import scorer
from aieval.scorers._token_hashes import distinct_by_hash
from aieval.scorers._tokens import (
    Normalization,
    check_normalize,
    rouge_score_tokens,
    squad_normalize,
)

__all__ = ["exact_match", "json_valid", "rouge_l", "token_f1"]

# Bound once: the per-pair cost of these scorers is a few microseconds, so attribute lookups show.
_lcs_length = LCSseq.similarity

_MANY = (list, tuple, set, frozenset)
_Metric = Callable[[str, str], float]


def _compare(metric: _Metric, prediction: Any, expected: Any, name: str) -> float | Score:
    """``metric(prediction, expected)``; over a list of accepted answers, the best as a Score."""
    pred = text_of(prediction)
    if isinstance(expected, str):  # the common case, kept fast
        return metric(pred, expected)
    if not isinstance(expected, _MANY):
        (answer,) = expected_texts(expected, name)  # a mapping is refused here
        return metric(pred, answer)
    return as_best_of_score(*best_of(lambda answer: metric(pred, answer), expected, name))


def _best_value(metric: _Metric, prediction: Any, expected: Any, name: str) -> float:
    pred = text_of(prediction)
    return best_of(lambda answer: metric(pred, answer), expected, name)[0]


@scorer
def exact_match(
    prediction: str, expected: Any, *, normalize: Normalization = None
) -> float | Score:
    """1.0 when the trimmed prediction equals the trimmed expected answer, else 0.0.

    A list ``expected`` is several accepted answers: matching any of them scores 1.0, and the
    :class:`~aieval.Score` says which. With ``normalize="squad"``, both sides are
    SQuAD-normalized first (lower case, no punctuation or articles, single spaces): the SQuAD
    v1.1 script's EM, a float.

    Example:
        >>> exact_match("  Paris ", "Paris"), exact_match("Paris.", "paris")
        (1.0, 0.0)
        >>> exact_match("paris", ["Paris", "paris"]).reason
        "best of 2 accepted answers: 'paris'"
        >>> exact_match("The Paris.", ["Lyon", "paris"], normalize="squad")
        1.0
    """
    if normalize is not None:
        check_normalize(normalize)
        return _best_value(_squad_em, prediction, expected, "exact_match")
    return _compare(_exact, prediction, expected, "exact_match")


def _exact(prediction: str, answer: str) -> float:
    return 1.0 if prediction.strip() == answer.strip() else 0.0


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
        json.loads(text_of(prediction))
    except (ValueError, RecursionError):
        # Nesting deeper than the parser's recursion limit is not usable JSON either.
        return 0.0
    return 1.0


@scorer
def rouge_l(
    prediction: str,
    expected: Any,
    *,
    tokenizer: Literal["whitespace", "rouge_score"] = "whitespace",
    use_stemmer: bool = False,
) -> float | Score:
    """ROUGE-L F1 between prediction and expected, on whitespace tokens (case-sensitive).

    Bit-for-bit equal to ``rouge_score``'s ``rougeL`` F-measure with a whitespace tokenizer
    and no stemming; 0.0 when either side has no tokens. With ``tokenizer="rouge_score"`` the
    text is tokenized as ``rouge-score`` does by default (lower case, ``a-z0-9`` runs only), and
    ``use_stemmer=True`` adds its Porter stemming (needs NLTK): equal to
    ``RougeScorer(["rougeL"], use_stemmer=...)`` bit for bit. A list ``expected`` is several
    references: the best F1 counts (as ``RougeScorer.score_multi``), in a Score naming it.

    Example:
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 4)
        0.8333
        >>> rouge_l("The cat!", "the cat", tokenizer="rouge_score")
        1.0
    """
    if tokenizer == "whitespace" and not use_stemmer and type(prediction) is type(expected) is str:
        return _rouge_l(prediction, expected)  # the common case, without the layers below
    if tokenizer == "rouge_score":
        metric = functools.partial(_rouge_score_l, stem=use_stemmer)
        return _compare(metric, prediction, expected, "rouge_l")
    if tokenizer != "whitespace" or use_stemmer:
        raise ConfigError(
            f"rouge_l: tokenizer={tokenizer!r}, use_stemmer={use_stemmer!r} is not supported; "
            "use tokenizer='whitespace' (no stemming) or tokenizer='rouge_score'"
        )
    return _compare(_rouge_l, prediction, expected, "rouge_l")


@rouge_l.batched
def _rouge_l_batch(
    predictions: Sequence[Any],
    expected: Sequence[Any],
    *,
    tokenizer: Literal["whitespace", "rouge_score"] = "whitespace",
    use_stemmer: bool = False,
) -> list[float | Score | ScorerError]:
    """``rouge_l`` over rows: the per-pair values, a row's failure as its value.

    The rows of two strings (whitespace tokens) are scored together, vectorized
    (:func:`~aieval.scorers._lcs.rouge_l_many`, the same bits as one call per row); any other
    row, and the ``rouge_score`` tokenizer, goes through ``rouge_l`` itself.
    """
    one = functools.partial(rouge_l.fn, tokenizer=tokenizer, use_stemmer=use_stemmer)
    one("", "")  # an unsupported option is the caller's error, raised once, not per row
    inline = tokenizer == "whitespace" and not use_stemmer
    if inline and set(map(type, predictions)) | set(map(type, expected)) <= {str}:
        return list(rouge_l_many(predictions, expected))  # every row two strings: no row loop
    results: list[float | Score | ScorerError] = []
    plain: list[int] = []
    for row, (pred_text, ref_text) in enumerate(zip(predictions, expected, strict=True)):
        if inline and type(pred_text) is str and type(ref_text) is str:
            plain.append(row)
            results.append(0.0)  # replaced below
            continue
        try:
            results.append(one(pred_text, ref_text))
        except ScorerError as exc:
            results.append(exc)
        except Exception as exc:  # as Scorer.score words it, kept to this row
            error = ScorerError(f"scorer 'rouge_l' raised {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            results.append(error)
    if plain:
        scores = rouge_l_many([predictions[i] for i in plain], [expected[i] for i in plain])
        for row, score in zip(plain, scores, strict=True):
            results[row] = score
    return results


def _rouge_score_l(prediction: str, answer: str, *, stem: bool) -> float:
    pred_tokens = rouge_score_tokens(prediction, stem=stem)
    ref_tokens = rouge_score_tokens(answer, stem=stem)
    if not pred_tokens or not ref_tokens:
        return 0.0
    return f_measure(lcs_of_tokens(pred_tokens, ref_tokens), len(pred_tokens), len(ref_tokens))


def _rouge_l(pred_text: str, ref_text: str) -> float:
    if pred_text == ref_text:
        # Same text, same tokens: skip tokenizing; only an all-whitespace text scores 0.0.
        return 1.0 if pred_text and not pred_text.isspace() else 0.0
    pred = pred_text.split()
    ref = ref_text.split()
    if not pred or not ref:
        return 0.0
    return f_measure(lcs_of_tokens(pred, ref), len(pred), len(ref))


@scorer
def token_f1(
    prediction: str,
    expected: Any,
    *,
    case_sensitive: bool = False,
    normalize: Normalization = None,
) -> float | Score:
    """Order-independent token F1: harmonic mean of token precision and recall.

    Shared tokens count up to the smaller of their two multiplicities. Tokens are split on
    whitespace and lower-cased unless ``case_sensitive=True``. 0.0 when either side is empty.
    A list ``expected`` is several accepted answers: the best F1 counts, in a Score naming it.
    With ``normalize="squad"`` it is the SQuAD v1.1 script's F1 (SQuAD normalization, best of
    several accepted answers when ``expected`` is a list), a float.

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
        return _best_value(_squad_f1, prediction, expected, "token_f1")
    metric = _token_f1_cased if case_sensitive else _token_f1
    return _compare(metric, prediction, expected, "token_f1")


def _token_f1(pred_text: str, ref_text: str) -> float:
    return _token_f1_cased(pred_text.lower(), ref_text.lower())


def _token_f1_cased(pred_text: str, ref_text: str) -> float:
    pred = pred_text.split()
    ref = ref_text.split()
    if not pred or not ref:
        return 0.0
    # The LCS of two sorted token lists is the size of their multiset intersection (any common
    # sub-multiset, sorted, is a subsequence of both); rapidfuzz's C++ LCS beats two Counters.
    # It compares tokens by hash: only where that is comparing them by text (else by ids).
    pred.sort()
    ref.sort()
    common = _lcs_length(pred, ref) if distinct_by_hash(pred, ref) else lcs_by_ids(pred, ref)
    return 2.0 * common / (len(pred) + len(ref))


def _squad_f1(prediction: str, answer: str) -> float:
    pred = squad_normalize(prediction).split()
    ref = squad_normalize(answer).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    # SQuAD v1.1 gives 0 when nothing is shared, including when both sides normalize to empty.
    return f_measure(common, len(pred), len(ref)) if common else 0.0


# seconds on a long text (LCS of tokens): scored off the event loop
for _metric in (rouge_l, token_f1):
    setattr(_metric.fn, "__aieval_off_loop__", True)  # noqa: B010
