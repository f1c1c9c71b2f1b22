"""The formula registry: ``formula_id -> normalize(raw, **params) -> 0..1`` (spec 4.1).

Every normalized number in aieval comes out of one registered formula, so a stored
``(formula_id, raw, params)`` triple always reproduces its normalized value. A formula either
returns a finite float in 0..1 or raises :class:`~aieval.errors.FormulaError` naming itself and
the bad value; it never returns NaN or a silently wrong number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, overload

from aieval.errors import ConfigError, FormulaError

__all__ = [
    "Formula",
    "adjusted_norm",
    "clamp",
    "formulas",
    "get_formula",
    "normalize",
    "register_formula",
]

FormulaFn = Callable[..., float]


@dataclass(frozen=True, slots=True)
class Formula:
    """A registered normalization formula.

    Attributes:
        id: the ``formula_id`` used in rubrics, profiles and stored results.
        fn: ``fn(raw, **params) -> float``; may raise :class:`FormulaError`.
        description: one line for docs and ``aieval`` listings.
        scale: the raw domain ``(low, high)`` when the formula has a fixed one (Likert, binary),
            used to convert critical floors written on the raw scale.
    """

    id: str
    fn: FormulaFn
    description: str = ""
    scale: tuple[float, float] | None = None


_REGISTRY: dict[str, Formula] = {}


def clamp(x: float) -> float:
    """``min(1, max(0, x))``.

    >>> clamp(1.5), clamp(-0.2), clamp(0.25)
    (1.0, 0.0, 0.25)
    """
    return min(1.0, max(0.0, float(x)))


@overload
def register_formula(
    formula_id: str,
    fn: None = None,
    *,
    description: str = ...,
    scale: tuple[float, float] | None = ...,
    replace: bool = ...,
) -> Callable[[FormulaFn], FormulaFn]: ...


@overload
def register_formula(
    formula_id: str,
    fn: FormulaFn,
    *,
    description: str = ...,
    scale: tuple[float, float] | None = ...,
    replace: bool = ...,
) -> FormulaFn: ...


def register_formula(
    formula_id: str,
    fn: FormulaFn | None = None,
    *,
    description: str = "",
    scale: tuple[float, float] | None = None,
    replace: bool = False,
) -> FormulaFn | Callable[[FormulaFn], FormulaFn]:
    """Register a normalization formula, directly or as a decorator.

    Args:
        formula_id: the id rubrics and profiles refer to.
        fn: ``fn(raw, **params) -> float``; omit to use as a decorator.
        description: one line shown in listings.
        scale: the fixed raw domain, if any (lets raw critical floors be converted).
        replace: allow replacing an existing formula of the same id.

    Example:
        >>> @register_formula("half", description="raw / 2", replace=True)
        ... def half(raw: float, **params: object) -> float:
        ...     return raw / 2
        >>> normalize("half", 1.0)
        0.5
    """

    def add(func: FormulaFn) -> FormulaFn:
        if not formula_id or not isinstance(formula_id, str):
            raise ConfigError("register_formula needs a non-empty string formula_id")
        if formula_id in _REGISTRY and not replace:
            raise ConfigError(
                f"formula {formula_id!r} is already registered; pass replace=True to override it"
            )
        desc = description or (func.__doc__ or "").strip().split("\n")[0]
        _REGISTRY[formula_id] = Formula(formula_id, func, desc, scale)
        return func

    return add if fn is None else add(fn)


def get_formula(formula_id: str) -> Formula:
    """The registered formula, or :class:`ConfigError` listing the known ids."""
    try:
        return _REGISTRY[formula_id]
    except KeyError:
        known = ", ".join(formulas())
        raise ConfigError(f"unknown formula_id {formula_id!r}; known formulas: {known}") from None


def formulas() -> list[str]:
    """Sorted ids of every registered formula."""
    return sorted(_REGISTRY)


def normalize(formula_id: str, raw: Any = None, /, **params: Any) -> float:
    """Normalize a raw value to 0..1 with a registered formula.

    Raises:
        ConfigError: unknown ``formula_id``.
        FormulaError: a value the formula cannot normalize (NaN, out of scale, wrong type,
            zero denominator, missing parameter); the message names the formula and the value.

    Example:
        >>> round(normalize("lower_is_better", 12.0, slo_good=8, slo_bad=30), 3)
        0.818
        >>> normalize("likert_1_5", 4)
        0.75
    """
    formula = get_formula(formula_id)
    try:
        value = formula.fn(raw, **params)
    except FormulaError:
        raise
    except TypeError as exc:
        raise FormulaError(f"formula {formula_id!r}: bad parameters {params!r}: {exc}") from exc
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormulaError(
            f"formula {formula_id!r} returned {type(value).__name__}, expected a float in 0..1"
        )
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise FormulaError(f"formula {formula_id!r} returned {value!r} for raw {raw!r}, not 0..1")
    return float(value)


def adjusted_norm(norm: float, n: int, *, prior: float = 0.5, k: float = 20.0) -> float:
    """Shrink a normalized score toward ``prior`` when it rests on few samples (spec 4.1).

    ``adjusted = (n * norm + k * prior) / (n + k)``.

    Example:
        >>> adjusted_norm(0.9, n=5)
        0.58
        >>> adjusted_norm(0.9, n=0)
        0.5
    """
    where = "adjusted_norm"
    value = _finite(where, norm, "norm")
    if not 0.0 <= value <= 1.0:
        raise FormulaError(f"{where}: norm {norm!r} is outside 0..1")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise FormulaError(f"{where}: n must be a non-negative integer, got {n!r}")
    prior_v = _finite(where, prior, "prior")
    k_v = _finite(where, k, "k")
    if not 0.0 <= prior_v <= 1.0:
        raise FormulaError(f"{where}: prior {prior!r} is outside 0..1")
    if k_v < 0 or n + k_v == 0:
        raise FormulaError(f"{where}: k must be >= 0 and n + k > 0 (got n={n}, k={k!r})")
    return (n * value + k_v * prior_v) / (n + k_v)


# -- helpers --------------------------------------------------------------------------------------


def _finite(formula_id: str, value: Any, what: str = "raw value") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormulaError(
            f"formula {formula_id!r}: {what} must be a number, got {type(value).__name__} {value!r}"
        )
    if not math.isfinite(value):
        raise FormulaError(f"formula {formula_id!r}: {what} is {value!r}, expected a finite number")
    return float(value)


def _in_scale(formula_id: str, raw: Any, low: float, high: float) -> float:
    value = _finite(formula_id, raw)
    if not low <= value <= high:
        raise FormulaError(
            f"formula {formula_id!r}: raw value {raw!r} is outside the scale {low:g}..{high:g}"
        )
    return value


def _counts(
    formula_id: str, raw: Any, params: Mapping[str, Any], keys: tuple[str, ...]
) -> dict[str, float]:
    """Read non-negative counts from a mapping ``raw`` or from keyword parameters."""
    source: Mapping[str, Any] = raw if isinstance(raw, Mapping) else params
    unknown = sorted(set(source) - set(keys))
    if unknown:
        raise FormulaError(
            f"formula {formula_id!r}: unknown count(s) {', '.join(unknown)}; "
            f"expected {', '.join(keys)}"
        )
    counts: dict[str, float] = {}
    for key in keys:
        value = _finite(formula_id, source.get(key, 0), key)
        if value < 0:
            raise FormulaError(f"formula {formula_id!r}: {key} is {value:g}, must be >= 0")
        counts[key] = value
    return counts


# -- built-in formulas ----------------------------------------------------------------------------


def normalize_binary(raw: Any, **_: Any) -> float:
    """Binary 0|1: ``norm = raw``."""
    if isinstance(raw, bool):
        return float(raw)
    value = _finite("binary", raw)
    if value not in (0.0, 1.0):
        raise FormulaError(f"formula 'binary': raw value {raw!r} is not 0 or 1")
    return value


def normalize_likert_1_5(raw: Any, **_: Any) -> float:
    """Likert 1..5: ``norm = (raw - 1) / 4``."""
    return (_in_scale("likert_1_5", raw, 1.0, 5.0) - 1.0) / 4.0


def normalize_likert_neg2_2(raw: Any, **_: Any) -> float:
    """Likert -2..2: ``norm = (raw + 2) / 4``."""
    return (_in_scale("likert_neg2_2", raw, -2.0, 2.0) + 2.0) / 4.0


def normalize_zero_one(raw: Any, **_: Any) -> float:
    """Continuous 0..1: ``norm = clamp(raw)``."""
    return clamp(_finite("zero_one", raw))


def normalize_linear(raw: Any, *, low: Any = None, high: Any = None, **_: Any) -> float:
    """Any bounded scale: ``norm = (raw - low) / (high - low)``."""
    if low is None or high is None:
        raise FormulaError("formula 'linear': needs parameters low and high (the raw scale)")
    lo = _finite("linear", low, "low")
    hi = _finite("linear", high, "high")
    if hi <= lo:
        raise FormulaError(f"formula 'linear': high ({high!r}) must be greater than low ({low!r})")
    return (_in_scale("linear", raw, lo, hi) - lo) / (hi - lo)


def normalize_pairwise(raw: Any = None, **params: Any) -> float:
    """Pairwise: ``norm = (wins + 0.5 * ties) / (wins + losses + ties)``.

    ``raw`` is a mapping of counts, or the counts come as keyword parameters, or ``raw`` is an
    already computed win rate in 0..1. Swapped-order inconsistencies count as ties (spec 8).
    """
    if raw is not None and not isinstance(raw, Mapping):
        return _in_scale("pairwise", raw, 0.0, 1.0)
    c = _counts("pairwise", raw, params, ("wins", "losses", "ties", "inconsistent"))
    ties = c["ties"] + c["inconsistent"]
    total = c["wins"] + c["losses"] + ties
    if total == 0:
        raise FormulaError("formula 'pairwise': zero denominator (no wins, losses or ties)")
    return (c["wins"] + 0.5 * ties) / total


def normalize_lower_is_better(
    raw: Any, *, slo_good: Any = None, slo_bad: Any = None, **_: Any
) -> float:
    """Lower is better: ``norm = clamp((slo_bad - raw) / (slo_bad - slo_good))``."""
    fid = "lower_is_better"
    if slo_good is None or slo_bad is None:
        raise FormulaError(f"formula {fid!r}: needs parameters slo_good and slo_bad")
    good = _finite(fid, slo_good, "slo_good")
    bad = _finite(fid, slo_bad, "slo_bad")
    if bad == good:
        raise FormulaError(f"formula {fid!r}: zero denominator (slo_good == slo_bad == {good:g})")
    if bad < good:
        raise FormulaError(f"formula {fid!r}: slo_good ({good:g}) must be below slo_bad ({bad:g})")
    return clamp((bad - _finite(fid, raw)) / (bad - good))


def _ratio(formula_id: str, raw: Any, params: Mapping[str, Any]) -> float:
    if raw is not None and not isinstance(raw, Mapping):
        return _in_scale(formula_id, raw, 0.0, 1.0)
    c = _counts(formula_id, raw, params, ("passed", "total"))
    if c["total"] == 0:
        raise FormulaError(f"formula {formula_id!r}: zero denominator (total is 0)")
    if c["passed"] > c["total"]:
        raise FormulaError(
            f"formula {formula_id!r}: passed ({c['passed']:g}) exceeds total ({c['total']:g})"
        )
    return c["passed"] / c["total"]


def normalize_fail_to_pass(raw: Any = None, **params: Any) -> float:
    """SWE fail-to-pass: ``passed_fail_to_pass / total_fail_to_pass``."""
    return _ratio("fail_to_pass", raw, params)


def normalize_pass_to_pass(raw: Any = None, **params: Any) -> float:
    """SWE pass-to-pass: ``passed_pass_to_pass / total_pass_to_pass``."""
    return _ratio("pass_to_pass", raw, params)


def _clamped_metric(formula_id: str) -> FormulaFn:
    def fn(raw: Any, **_: Any) -> float:
        return clamp(_finite(formula_id, raw))

    return fn


register_formula("binary", normalize_binary, scale=(0.0, 1.0))
register_formula("likert_1_5", normalize_likert_1_5, scale=(1.0, 5.0))
register_formula("likert_neg2_2", normalize_likert_neg2_2, scale=(-2.0, 2.0))
register_formula("zero_one", normalize_zero_one, scale=(0.0, 1.0))
register_formula("linear", normalize_linear)
register_formula("pairwise", normalize_pairwise)
register_formula("lower_is_better", normalize_lower_is_better)
register_formula("fail_to_pass", normalize_fail_to_pass, scale=(0.0, 1.0))
register_formula("pass_to_pass", normalize_pass_to_pass, scale=(0.0, 1.0))
for _metric, _label in (
    ("ndcg", "nDCG"),
    ("map", "MAP"),
    ("mrr", "MRR"),
    ("recall_at_k", "Recall@k"),
    ("precision_at_k", "Precision@k"),
):
    register_formula(
        _metric,
        _clamped_metric(_metric),
        description=f"Retrieval {_label} in 0..1: norm = clamp(raw)",
        scale=(0.0, 1.0),
    )
