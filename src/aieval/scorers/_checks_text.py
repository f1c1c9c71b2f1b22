"""Deterministic text checks: substrings, prefixes, regular expressions, equality, edit distance
and word counts.

Every check scores 1.0 when it holds and 0.0 when it does not, with a reason either way;
``negate=True`` inverts it. A ``None`` output counts as empty text. A check with a ``value``
(``values``) option compares with the row's expected answer when the option is not given.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from aieval._types import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import _expressions
from aieval.scorers._answers import text_of
from aieval.scorers._check import check, outcome, reference_text, reference_texts

__all__ = [
    "contains",
    "contains_all",
    "contains_any",
    "equals",
    "icontains",
    "icontains_all",
    "icontains_any",
    "levenshtein",
    "regex",
    "starts_with",
    "word_count",
]

_SHOWN = 60


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


def _need_value(options: dict[str, Any]) -> None:
    if options.get("value") == "":
        raise ConfigError("value: an empty text is in every output; give a non-empty one")


def _need_values(options: dict[str, Any]) -> None:
    values = options.get("values")
    if values == []:
        raise ConfigError("values: give at least one text")
    if values is not None and "" in values:
        raise ConfigError("values: an empty text is in every output; give non-empty ones")


def _contains(
    name: str, prediction: Any, expected: Any, value: str | None, negate: bool, fold: bool
) -> Score:
    needle = reference_text(value, expected, name)
    text = text_of(prediction)
    found = needle.casefold() in text.casefold() if fold else needle in text
    case = " (ignoring case)" if fold else ""
    verb = "contains" if found else "does not contain"
    return outcome(found, f"output {verb} {_shown(needle)}{case}", negate=negate)


@check(_need_value)
def contains(
    prediction: Any, expected: Any = None, *, value: str | None = None, negate: bool = False
) -> Score:
    """Whether the output contains ``value`` (default: the expected answer), case-sensitive.

    Example:
        >>> contains("Your refund is on its way", value="refund").value
        1.0
        >>> contains("Sorry", value="refund", negate=True).value
        1.0
    """
    return _contains("contains", prediction, expected, value, negate, fold=False)


@check(_need_value)
def icontains(
    prediction: Any, expected: Any = None, *, value: str | None = None, negate: bool = False
) -> Score:
    """Whether the output contains ``value`` (default: the expected answer), ignoring case.

    Example:
        >>> icontains("REFUND issued", value="refund").value
        1.0
    """
    return _contains("icontains", prediction, expected, value, negate, fold=True)


#: Values a reason lists before it says how many more there are.
_LISTED = 10


def _listed(values: list[str]) -> str:
    """The first :data:`_LISTED` values, shown, and how many more there are."""
    shown = ", ".join(_shown(v) for v in values[:_LISTED])
    more = len(values) - _LISTED
    return shown if more <= 0 else f"{shown} and {more} more"


def _contains_many(
    name: str,
    prediction: Any,
    expected: Any,
    values: list[str] | None,
    negate: bool,
    *,
    fold: bool,
    every: bool,
) -> Score:
    needles = reference_texts(values, expected, name)
    text = text_of(prediction)
    haystack = text.casefold() if fold else text
    present = [(n.casefold() if fold else n) in haystack for n in needles]  # one pass each
    found = [n for n, hit in zip(needles, present, strict=True) if hit]
    missing = [n for n, hit in zip(needles, present, strict=True) if not hit]
    case = " (ignoring case)" if fold else ""
    passed = not missing if every else bool(found)
    if every:
        says = (
            f"output contains all {len(needles)} values{case}"
            if passed
            else f"output lacks {_listed(missing)}{case}"
        )
    else:
        says = (
            f"output contains {_shown(found[0])}{case}"
            if passed
            else f"output contains none of {_listed(needles)}{case}"
        )
    return outcome(passed, says, negate=negate, raw=len(found))


@check(_need_values)
def contains_any(
    prediction: Any, expected: Any = None, *, values: list[str] | None = None, negate: bool = False
) -> Score:
    """Whether the output contains at least one of ``values`` (default: the expected answers).

    Example:
        >>> contains_any("a cat", values=["dog", "cat"]).value
        1.0
    """
    return _contains_many(
        "contains_any", prediction, expected, values, negate, fold=False, every=False
    )


@check(_need_values)
def contains_all(
    prediction: Any, expected: Any = None, *, values: list[str] | None = None, negate: bool = False
) -> Score:
    """Whether the output contains every one of ``values`` (default: the expected answers).

    Example:
        >>> contains_all("a cat and a dog", values=["dog", "cat"]).value
        1.0
    """
    return _contains_many(
        "contains_all", prediction, expected, values, negate, fold=False, every=True
    )


@check(_need_values)
def icontains_any(
    prediction: Any, expected: Any = None, *, values: list[str] | None = None, negate: bool = False
) -> Score:
    """:func:`contains_any`, ignoring case.

    Example:
        >>> icontains_any("A CAT", values=["dog", "cat"]).value
        1.0
    """
    return _contains_many(
        "icontains_any", prediction, expected, values, negate, fold=True, every=False
    )


@check(_need_values)
def icontains_all(
    prediction: Any, expected: Any = None, *, values: list[str] | None = None, negate: bool = False
) -> Score:
    """:func:`contains_all`, ignoring case.

    Example:
        >>> icontains_all("A Cat, a DOG", values=["dog", "cat"]).value
        1.0
    """
    return _contains_many(
        "icontains_all", prediction, expected, values, negate, fold=True, every=True
    )


@check(_need_value)
def starts_with(
    prediction: Any, expected: Any = None, *, value: str | None = None, negate: bool = False
) -> Score:
    """Whether the output starts with ``value`` (default: the expected answer), as is.

    Example:
        >>> starts_with("Yes, because...", value="Yes").value
        1.0
    """
    prefix = reference_text(value, expected, "starts_with")
    found = text_of(prediction).startswith(prefix)
    verb = "starts with" if found else "does not start with"
    return outcome(found, f"output {verb} {_shown(prefix)}", negate=negate)


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str, flags: str) -> int:
    """The ``re`` flag bits of ``flags``, once ``pattern`` compiles with them."""
    unknown = sorted(set(flags) - set(_FLAGS))
    if unknown:
        raise ConfigError(f"regex.flags: unknown flag {unknown[0]!r}; use any of i, m, s, x")
    bits = 0
    for letter in flags:
        bits |= _FLAGS[letter]
    # compiling a crafted class or repeat may take minutes: under the expression limit
    what = f"compiling /{_expressions.shown(pattern)}/{flags}"
    try:
        answer = _expressions.evaluate("regex", what, ("regex_check", pattern, bits))
    except ScorerError as exc:
        raise ConfigError(f"regex.pattern: {exc}") from None
    if "error" in answer or "raised" in answer:
        why = answer.get("error") or answer["raised"]
        raise ConfigError(
            f"regex.pattern: {_expressions.shown(pattern)!r} is not a regular expression: {why}"
        )
    return bits


def _valid_regex(options: dict[str, Any]) -> None:
    _compiled(options["pattern"], options["flags"])


@check(_valid_regex, bounded=True)
def regex(
    prediction: Any,
    _expected: Any = None,
    *,
    pattern: str,
    flags: str = "",
    full: bool = False,
    negate: bool = False,
) -> Score:
    """Whether ``pattern`` (Python ``re`` syntax) matches somewhere in the output, or the whole
    output with ``full=True``. The match runs under the per-sample expression limit (1 s): longer
    is that sample's error (a pattern that backtracks without end on a crafted output).
    ``flags`` holds any of ``i`` (ignore case), ``m`` (multi-line),
    ``s`` (dot matches newline), ``x`` (verbose).

    Example:
        >>> regex("Order #1234 shipped", pattern=r"#\\d{4}").value
        1.0
        >>> regex("ok", pattern="OK", flags="i", full=True).value
        1.0
    """
    text = text_of(prediction)
    what = f"/{_expressions.shown(pattern)}/{flags} on this output ({len(text)} characters)"
    request = ("regex", pattern, _compiled(pattern, flags), full, text)
    answer = _expressions.evaluate("regex", what, request)
    if "raised" in answer:
        raise ScorerError(f"regex: {what} raised {answer['raised']}: {answer['message']}")
    match: str | None = answer["match"]
    how = "matches" if full else "has a match for"
    if match is None:
        how = "does not match" if full else "has no match for"
    says = f"output {how} /{pattern}/{flags}"
    if match is not None and not full:
        says += f": {_shown(match)}"
    return outcome(match is not None, says, negate=negate)


@check()
def equals(
    prediction: Any, expected: Any = None, *, value: str | None = None, negate: bool = False
) -> Score:
    """Whether the output is exactly ``value`` (default: the expected answer), byte for byte:
    no trimming, no case folding (``exact_match`` trims both sides).

    Example:
        >>> equals("Paris", value="Paris").value, equals("Paris ", value="Paris").value
        (1.0, 0.0)
    """
    wanted = reference_text(value, expected, "equals")
    text = text_of(prediction)
    if text == wanted:
        return outcome(True, f"output equals {_shown(wanted)}", negate=negate)
    at = next((i for i, (a, b) in enumerate(zip(text, wanted, strict=False)) if a != b), None)
    where = f"first difference at character {at if at is not None else min(len(text), len(wanted))}"
    return outcome(False, f"output differs from {_shown(wanted)} ({where})", negate=negate)


def _valid_distance(options: dict[str, Any]) -> None:
    limit = options.get("max_distance")
    if limit is not None and limit < 0:
        raise ConfigError(f"levenshtein.max_distance: must be >= 0, got {limit}")
    if limit is None and options.get("negate"):
        raise ConfigError("levenshtein.negate: needs max_distance (a similarity is not a check)")


@check(_valid_distance, bounded=True)
def levenshtein(
    prediction: Any,
    expected: Any = None,
    *,
    value: str | None = None,
    max_distance: int | None = None,
    negate: bool = False,
) -> Score:
    """Edit distance between the output and ``value`` (default: the expected answer).

    With ``max_distance``, a check: 1.0 when the distance is at most ``max_distance``. Without
    it, the normalized similarity ``1 - distance / max(len)`` (1.0 for two empty texts). The
    distance is the Score's ``raw``.

    Example:
        >>> levenshtein("kitten", value="sitting", max_distance=3).value
        1.0
        >>> round(levenshtein("kitten", value="sitting").value, 4)
        0.5714
    """
    wanted = reference_text(value, expected, "levenshtein")
    text = text_of(prediction)
    # quadratic in the texts' lengths: under the expression limit
    request = ("levenshtein", text, wanted)
    answer = _expressions.evaluate("levenshtein", "the edit distance", request)
    if "raised" in answer:
        raise ScorerError(f"levenshtein: the edit distance raised {answer['raised']}")
    distance: int = answer["distance"]
    if max_distance is None:
        similarity: float = answer["similarity"]
        return Score(similarity, distance, f"edit distance {distance} to {_shown(wanted)}")
    passed = distance <= max_distance
    relation = "<=" if passed else ">"
    says = f"edit distance {distance} {relation} {max_distance} to {_shown(wanted)}"
    return outcome(passed, says, negate=negate, raw=distance)


def _valid_bounds(options: dict[str, Any]) -> None:
    low, high = options.get("min_words"), options.get("max_words")
    if low is None and high is None:
        raise ConfigError("word_count: give min_words, max_words or both")
    for key, bound in (("min_words", low), ("max_words", high)):
        if bound is not None and bound < 0:
            raise ConfigError(f"word_count.{key}: must be >= 0, got {bound}")
    if low is not None and high is not None and low > high:
        raise ConfigError(f"word_count.min_words: {low} is above max_words {high}")


@check(_valid_bounds)
def word_count(
    prediction: Any,
    _expected: Any = None,
    *,
    min_words: int | None = None,
    max_words: int | None = None,
    negate: bool = False,
) -> Score:
    """Whether the output's word count (whitespace-separated) is within the bounds given.

    Example:
        >>> word_count("one two three", min_words=2, max_words=5).value
        1.0
        >>> word_count("one two three", max_words=2).reason
        '3 words, above max_words 2'
    """
    _valid_bounds({"min_words": min_words, "max_words": max_words})
    words = len(text_of(prediction).split())
    if min_words is not None and words < min_words:
        return outcome(
            False, f"{words} words, below min_words {min_words}", negate=negate, raw=words
        )
    if max_words is not None and words > max_words:
        return outcome(
            False, f"{words} words, above max_words {max_words}", negate=negate, raw=words
        )
    return outcome(True, f"{words} words, within bounds", negate=negate, raw=words)


# one pass over the output per value: on a long output, off the event loop (and charged to the
# sample's check budget)
for _many in (contains_any, contains_all, icontains_any, icontains_all):
    setattr(_many.fn, "__aieval_off_loop__", True)  # noqa: B010
