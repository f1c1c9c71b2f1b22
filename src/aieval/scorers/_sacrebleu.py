"""Sentence-level BLEU and chrF through ``sacrebleu`` (extra ``metrics``), scaled to 0..1.

sacrebleu's floating point can overshoot 100 by an ulp (``100.00000000000004`` for identical
one-token texts); such a score is reported as 1.0, so a perfect match never reads as out of range.

``sacrebleu`` is imported on first use; without it the scorer raises a
:class:`~aieval.errors.ConfigError` naming the extra to install.
"""

from __future__ import annotations

import functools
from typing import Any

from aieval.errors import ConfigError
from aieval.scorers._answers import expected_texts
from aieval.scorers._scorer import scorer

__all__ = ["bleu", "chrf"]

_INSTALL_HINT = "the {name} scorer needs sacrebleu: pip install 'aieval[metrics]'"


def _references(expected: Any, name: str) -> list[str]:
    """One reference, or several (a list or tuple): sacrebleu scores against all of them.

    A mapping or an empty list is a :class:`~aieval.errors.ScorerError`, never its ``str()``.
    """
    return expected_texts(expected, name)


def _hypothesis(prediction: Any) -> str:
    return "" if prediction is None else str(prediction)


def _scaled(metric: Any, prediction: Any, expected: Any, name: str) -> float:
    score = metric.sentence_score(_hypothesis(prediction), _references(expected, name)).score
    return min(1.0, float(score) / 100)


def _metrics(name: str) -> Any:
    try:
        from sacrebleu import metrics
    except ImportError:
        raise ConfigError(_INSTALL_HINT.format(name=name)) from None
    return metrics


@functools.lru_cache(maxsize=32)
def _bleu(tokenize: str, lowercase: bool, smooth_method: str) -> Any:
    try:
        return _metrics("bleu").BLEU(
            tokenize=tokenize,
            lowercase=lowercase,
            smooth_method=smooth_method,
            effective_order=True,
        )
    except (KeyError, ValueError, AssertionError) as exc:
        raise ConfigError(f"bleu: unsupported option ({exc})") from None


#: The largest ``word_order`` chrf takes (2 is chrF++); its cost grows with the order, so a
#: larger one (a row's ``word_order: 3000000``) would run for minutes.
MAX_CHRF_WORD_ORDER = 2


def check_word_order(word_order: Any) -> None:
    """Refuse a ``word_order`` outside 0..MAX_CHRF_WORD_ORDER (ConfigError naming the option)."""
    if isinstance(word_order, bool) or not isinstance(word_order, int):
        raise ConfigError(f"chrf.word_order: must be a whole number, got {word_order!r}")
    if not 0 <= word_order <= MAX_CHRF_WORD_ORDER:
        raise ConfigError(
            f"chrf.word_order: {word_order} is outside 0..{MAX_CHRF_WORD_ORDER} (0: chrF, "
            "2: chrF++)"
        )


@functools.lru_cache(maxsize=32)
def _chrf(word_order: int, lowercase: bool) -> Any:
    check_word_order(word_order)
    try:
        return _metrics("chrf").CHRF(word_order=word_order, lowercase=lowercase)
    except (KeyError, ValueError, AssertionError) as exc:
        raise ConfigError(f"chrf: unsupported option ({exc})") from None


@scorer
def bleu(
    prediction: str,
    expected: str,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
) -> float:
    """Sentence BLEU / 100, as ``sacrebleu.sentence_bleu`` computes it (effective n-gram order).

    ``expected`` may be a list of references. Options are sacrebleu's (``tokenize``: ``13a``,
    ``intl``, ``zh``, ``char``, ``none``...; ``smooth_method``: ``exp``, ``floor``, ``add-k``,
    ``none``). Needs the ``metrics`` extra.

    Example:
        >>> round(bleu("the cat sat on the mat", "the cat sat on the mat"), 4)
        1.0
    """
    return _scaled(_bleu(tokenize, lowercase, smooth_method), prediction, expected, "bleu")


@scorer
def chrf(prediction: str, expected: str, *, word_order: int = 0, lowercase: bool = False) -> float:
    """Sentence chrF / 100, as ``sacrebleu.sentence_chrf`` computes it (``word_order=2``: chrF++).

    ``expected`` may be a list of references. Needs the ``metrics`` extra.

    Example:
        >>> round(chrf("the cat sat", "the cat sat"), 4)
        1.0
    """
    return _scaled(_chrf(word_order, lowercase), prediction, expected, "chrf")


# seconds on a long text (n-gram statistics): scored off the event loop
for _metric in (bleu, chrf):
    setattr(_metric.fn, "__aieval_off_loop__", True)  # noqa: B010
