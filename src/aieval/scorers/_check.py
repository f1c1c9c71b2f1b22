"""What every deterministic check shares: option validation, ``negate`` and the scored outcome.

A check is a registered :class:`~aieval.scorers.Scorer` whose options are keyword-only
parameters. :class:`Check` validates options when they are bound (``with_options``, an eval
file's ``scorers:`` entry), so a bad option is a :class:`~aieval.errors.ConfigError` naming the
check and the key before the first sample, never an error on every sample.
"""

from __future__ import annotations

import functools
import inspect
import math
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from aieval._keys import unknown_key
from aieval._types import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers._answers import text_of
from aieval.scorers._scorer import CONTEXT_PARAMETERS, Scorer, scorer

__all__ = ["Check", "check", "outcome", "reference_text", "reference_texts"]

#: ``(options) -> None``: a check's own rule over its validated options (raises ConfigError).
Rule = Callable[[dict[str, Any]], None]


class Check(Scorer):
    """A scorer whose options are validated when bound, by type and by the check's own rule."""

    def with_options(self, *, name: str | None = None, **options: Any) -> Check:
        """A copy with ``options`` bound and validated (:class:`ConfigError` names the key);
        ``threshold`` and ``weight`` grade it as :meth:`Scorer.with_options` says."""
        options, threshold, weight = self._split_grading(options)
        merged = validate_options(self.fn, self.name, {**self.options, **options})
        return Check(
            self.fn,
            name=name or self.name,
            options=merged,
            batch_fn=self.batch_fn,
            threshold=threshold,
            weight=weight,
        )


def check(
    rule: Rule | None = None, *, bounded: bool = False
) -> Callable[[Callable[..., Any]], Check]:
    """Register ``fn`` as a :class:`Check`; ``rule`` checks its options beyond their types.

    ``bounded``: ``fn`` waits on a worker of the per-sample expression limit
    (:mod:`aieval.scorers._expressions`), so :meth:`Scorer.score` runs it off the event loop.
    """

    def wrap(fn: Callable[..., Any]) -> Check:
        fn.__aieval_rule__ = rule  # type: ignore[attr-defined]
        fn.__aieval_bounded__ = bounded  # type: ignore[attr-defined]
        built = scorer(Check(fn))
        assert isinstance(built, Check)
        return built

    return wrap


def validate_options(fn: Callable[..., Any], name: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` converted to their declared types; :class:`ConfigError` names a bad key."""
    parameters = _options_of(fn)
    hints = _hints(fn)
    validated: dict[str, Any] = {}
    for key, value in options.items():
        if key not in parameters:
            raise ConfigError(f"{name}.{key}: {unknown_key(key, parameters)}")
        try:
            validated[key] = _adapter(hints.get(key, Any)).validate_python(value, strict=True)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            raise ConfigError(f"{name}.{key}{where}: {error['msg']} (got {value!r})") from None
        if _not_finite(validated[key]):
            raise ConfigError(f"{name}.{key}: must be a finite number (got {value!r})")
    for key, parameter in parameters.items():
        if parameter.default is inspect.Parameter.empty and key not in validated:
            raise ConfigError(f"{name}.{key}: required option missing")
    rule: Rule | None = getattr(fn, "__aieval_rule__", None)
    if rule is not None:
        defaults = {k: p.default for k, p in parameters.items() if p.default is not p.empty}
        try:
            rule({**defaults, **validated})
        except ConfigError as exc:
            message = str(exc)
            if message.startswith((f"{name}.", f"{name}:")):
                raise
            raise ConfigError(f"{name}.{message}") from None
    return validated


def _not_finite(value: Any) -> bool:
    """Whether ``value`` is, or holds, a NaN or infinite float (every comparison with NaN is
    false: a ``max_s`` of NaN would pass or fail every sample silently)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list | tuple):
        return any(_not_finite(v) for v in value)
    if isinstance(value, dict):
        return any(_not_finite(v) for v in value.values())
    return False


def _options_of(fn: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    return {
        p.name: p
        for p in inspect.signature(fn).parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.name not in CONTEXT_PARAMETERS
    }


@functools.cache
def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    return typing.get_type_hints(fn)


@functools.cache
def _adapter(hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(hint)


def outcome(passed: bool, says: str, *, negate: bool = False, raw: Any = None) -> Score:
    """1.0 when ``passed`` (or, with ``negate``, when it did not), else 0.0, with the reason.

    ``says`` is what was observed ("output contains 'refund'"); a negated check that found it
    says so ("output contains 'refund' (negate: it must not)").
    """
    if negate:
        return Score(
            0.0 if passed else 1.0, raw, f"{says} (negate: it must not)" if passed else says
        )
    return Score(1.0 if passed else 0.0, raw, says)


def reference_text(value: str | None, expected: Any, name: str) -> str:
    """The check's ``value`` option, else the row's expected answer as text.

    Raises:
        ScorerError: neither is given, or ``expected`` is a list or mapping.
    """
    if value is not None:
        return value
    if expected is None:
        raise ScorerError(
            f"scorer {name!r}: no value option and no expected answer for this example"
        )
    if isinstance(expected, (Mapping, list, tuple, set, frozenset)):
        raise ScorerError(
            f"scorer {name!r}: the expected answer is a {type(expected).__name__}, not a text; "
            "give the check a 'value'"
        )
    return text_of(expected)


def reference_texts(values: list[str] | None, expected: Any, name: str) -> list[str]:
    """The check's ``values`` option, else the row's expected answer(s) as a list of texts."""
    if values is not None:
        return values
    if isinstance(expected, (list, tuple)) and expected:
        if any(isinstance(item, (Mapping, list, tuple, set, frozenset)) for item in expected):
            raise ScorerError(f"scorer {name!r}: the expected answers must be texts")
        return [text_of(item) for item in expected]
    return [reference_text(None, expected, name)]
