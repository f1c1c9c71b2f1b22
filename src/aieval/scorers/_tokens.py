"""Text normalizations that reproduce other tools' numbers: SQuAD answers and rouge-score tokens.

``squad_tokens`` follows the official SQuAD v1.1 evaluation script: lower-case, drop ASCII
punctuation, drop the articles ``a``/``an``/``the`` as whole words, then split on whitespace.
``rouge_score_tokens`` follows the ``rouge-score`` package's default tokenizer: lower-case, keep
runs of ``a-z``/``0-9`` only, and with ``stem=True`` apply NLTK's Porter stemmer to tokens longer
than three characters.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Literal

from aieval.errors import ConfigError

__all__ = ["Normalization", "check_normalize", "rouge_score_tokens", "squad_normalize"]

#: Answer normalizations a text scorer accepts (``None``: the seed's behaviour).
Normalization = Literal["squad"] | None

_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_ALNUM_TOKEN = re.compile(r"^[a-z0-9]+$")
_STEM_HINT = "rouge_l(..., use_stemmer=True) needs NLTK: pip install 'aieval[metrics]'"


def check_normalize(normalize: Any) -> None:
    """Refuse an unknown ``normalize=`` value with the ones that exist."""
    if normalize not in (None, "squad"):
        raise ConfigError(f"normalize={normalize!r} is not supported; use None or 'squad'")


def squad_normalize(text: str) -> str:
    """SQuAD v1.1 answer normalization.

    Example:
        >>> squad_normalize("  The  Eiffel-Tower, Paris! ")
        'eiffeltower paris'
    """
    no_punct = text.lower().translate(_DROP_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def rouge_score_tokens(text: str, *, stem: bool = False) -> list[str]:
    """Tokens as ``rouge-score``'s default tokenizer makes them.

    Example:
        >>> rouge_score_tokens("The cats' café, 2x!")
        ['the', 'cats', 'caf', '2x']
    """
    tokens = _NOT_ALNUM.sub(" ", text.lower()).split()
    if stem:
        stemmer = _porter()
        tokens = [stemmer(t) if len(t) > 3 else t for t in tokens]
    # A stem is re-checked: rouge-score keeps only tokens that are still plain a-z/0-9.
    return [t for t in tokens if _ALNUM_TOKEN.match(t)]


@functools.cache
def _porter() -> Any:
    try:
        from nltk.stem import porter  # type: ignore[import-untyped]
    except ImportError:
        raise ConfigError(_STEM_HINT) from None
    return functools.lru_cache(maxsize=65536)(porter.PorterStemmer().stem)
