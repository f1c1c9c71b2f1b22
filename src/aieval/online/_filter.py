"""Whether a trace matches a rule's filter: one of its spans meets every condition.

A trace's attributes are data written by whoever sends traces: a filter only reads them. A
regex is a full match under the ``regex`` package's time limit, on a value of at most
:data:`MAX_REGEX_VALUE_CHARS` characters, so a hostile value cannot hang the server; a trace
the filter cannot decide raises :class:`~aieval.errors.FilterError`, which the engine records
as that trace's ``error`` (never a silent match or miss)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import regex

from aieval.errors import FilterError, FilterTimeout
from aieval.online._model import AttributeMatch, OnlineRule, TraceFilter
from aieval.traces import Span

__all__ = [
    "MAX_REGEX_CHARS",
    "MAX_REGEX_VALUE_CHARS",
    "REGEX_TIMEOUT_S",
    "compile_regex",
    "rule_matches",
    "trace_matches",
]

#: Seconds one regex may run on one attribute value.
REGEX_TIMEOUT_S = 0.05
#: The longest attribute value a regex is run on; a longer one is a :class:`FilterError`.
MAX_REGEX_VALUE_CHARS = 4096
#: The longest regex a rule may give.
MAX_REGEX_CHARS = 1000


@lru_cache(maxsize=512)
def compile_regex(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled (cached: rules are few, traces many).

    Raises:
        ValueError: an invalid pattern, or one over :data:`MAX_REGEX_CHARS` characters.
    """
    if len(pattern) > MAX_REGEX_CHARS:
        raise ValueError(f"a regex of {len(pattern)} characters; at most {MAX_REGEX_CHARS}")
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


def trace_matches(flt: TraceFilter, spans: Iterable[Span], *, rule: str = "") -> bool:
    """Whether one of ``spans`` (a trace's) meets every condition of ``flt`` (no condition:
    any trace with a span matches).

    ``service_name`` is the span's resource ``service.name``, ``span_name`` its name; an
    attribute ``equals`` a string exactly, a number by value (``1`` equals ``1.0``), a bool
    as a bool (``true`` never equals ``1``); ``regex`` fully matches a string value (any other
    value does not match); ``exists`` tells whether the key is present.

    Raises:
        FilterError: no span matches and one could not be judged: a string value over
            :data:`MAX_REGEX_VALUE_CHARS` characters given to a regex, or
            :class:`FilterTimeout`, a regex run past :data:`REGEX_TIMEOUT_S`. Both name
            ``rule`` and the attribute.
    """
    undecided: FilterError | None = None
    for span in spans:
        try:
            if _span_matches(flt, span, rule):
                return True
        except FilterError as exc:
            # another span may still match plainly: a match found is a match
            undecided = undecided or exc
    if undecided is not None:
        raise undecided
    return False


def rule_matches(rule: OnlineRule, spans: Iterable[Span]) -> bool:
    """Whether a trace's ``spans`` match ``rule``'s filter (see :func:`trace_matches`; its
    errors name the rule)."""
    return trace_matches(rule.filter, spans, rule=rule.name)


def _span_matches(flt: TraceFilter, span: Span, rule: str) -> bool:
    if flt.service_name is not None and span.service != flt.service_name:
        return False
    if flt.span_name is not None and span.name != flt.span_name:
        return False
    if not flt.attributes:
        return True
    attributes = span.attributes
    return all(_meets(cond, attributes, rule) for cond in flt.attributes)


def _meets(cond: AttributeMatch, attributes: Mapping[str, Any], rule: str) -> bool:
    if cond.exists is not None:
        return (cond.key in attributes) is cond.exists
    if cond.key not in attributes:
        return False
    value = attributes[cond.key]
    if cond.regex is not None:
        return _regex_matches(cond, value, rule)
    return _equal(value, cond.equals)


def _equal(value: Any, wanted: Any) -> bool:
    """``value`` (as the span holds it) equals ``wanted``: bools only as bools, numbers by
    value, strings exactly."""
    if isinstance(wanted, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value is wanted
    if isinstance(wanted, int | float):
        return isinstance(value, int | float) and value == wanted
    return isinstance(value, str) and value == wanted


def _regex_matches(cond: AttributeMatch, value: Any, rule: str) -> bool:
    assert cond.regex is not None
    if not isinstance(value, str):
        return False
    if len(value) > MAX_REGEX_VALUE_CHARS:
        raise FilterError(
            f"rule {rule!r}: attribute {cond.key!r} holds {len(value):,} characters, over the "
            f"{MAX_REGEX_VALUE_CHARS:,} a regex is run on; match it with 'equals' or 'exists', "
            "or on a shorter attribute",
            rule=rule,
            key=cond.key,
        )
    try:
        return compile_regex(cond.regex).fullmatch(value, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        raise FilterTimeout(
            f"rule {rule!r}: the regex of attribute {cond.key!r} ran past "
            f"{REGEX_TIMEOUT_S * 1000:.0f} ms on a value of {len(value):,} characters; "
            "simplify the regex (avoid nested repetition such as (a+)+)",
            rule=rule,
            key=cond.key,
        ) from None
