"""The deterministic grading algorithm of spec 5.1, with the placement explanation of 5.2.

Aggregation uses exact rational arithmetic, so the weighted score depends only on the inputs'
values: scaling every weight by the same factor, or reordering criteria, cannot move a run across
a band or threshold boundary through float rounding.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from aieval._floors import at_least, shown_apart
from aieval.errors import ConfigError
from aieval.grading._categories import DEFAULT_FLOORS, default_floor_category, known_category
from aieval.grading._formulas import adjusted_norm, normalize
from aieval.grading._gate_result import GateResult
from aieval.grading._gates import REQUIRED_GATES

__all__ = [
    "BANDS",
    "DEFAULT_FLOORS",
    "CriterionResult",
    "CriterionScore",
    "FloorCheck",
    "GradeResult",
    "band",
    "default_floor_category",
    "grade",
    "known_category",
]

Grade = Literal["A", "B", "C", "D", "F"]

#: Lower bounds of the letter bands on the 0..100 scale (spec 5).
BANDS: tuple[tuple[Grade, int], ...] = (("A", 90), ("B", 80), ("C", 70), ("D", 60), ("F", 0))


_ORDER = "ABCDF"
# Normalized values, means and thresholds are floats: every floor, the pass threshold and the A
# margin are compared with at_least (equal up to float rounding meets), so 2.8 / 4 clears a
# 0.70 floor and ten 0.1 scores clear a 0.1 floor.
_A_MARGIN = 0.10


@dataclass(frozen=True, slots=True)
class CriterionScore:
    """One criterion's raw score and how to normalize and weigh it (spec 5.1 input).

    Attributes:
        name: criterion name, unique within a grading call.
        raw_score: the raw value (a Likert point, a latency, a counts mapping, ...).
        formula_id: the registered formula that normalizes ``raw_score``.
        weight: relative weight (>= 0); weights need not sum to 1.
        critical_floor: normalized floor in 0..1; missing it caps the grade at D.
        params: extra formula parameters (``slo_good``/``slo_bad``, ``low``/``high``).
        category: ``correctness``, ``safety`` or ``validation`` (any case), or a category the
            grading's ``default_floors`` name; selects a default floor when ``critical_floor``
            is ``None``. Any other category is a ``ConfigError`` when graded (with the nearest
            known one). Without a category, the name selects it: a name equal
            to a floor's category or starting with it and ``_``/``-``/``.``
            (``correctness_rubric``, ``safety-check``).
        kind: ``objective``, ``judge``, ``efficiency`` or ``overlap``, for reports and warnings.
        n: number of samples behind the score; enables ``adjusted_norm``.
        calibrated: for judge criteria, whether the judge was checked against human labels.
    """

    name: str
    raw_score: Any
    formula_id: str = "zero_one"
    weight: float = 1.0
    critical_floor: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    category: str | None = None
    kind: str | None = None
    n: int | None = None
    calibrated: bool | None = None

    def __post_init__(self) -> None:
        if self.category is not None and not isinstance(self.category, str):
            raise ConfigError(
                f"criterion {self.name!r}: category must be text, got {self.category!r}"
            )


@dataclass(frozen=True, slots=True)
class CriterionResult:
    """A criterion after normalization: raw and normalized values are both kept."""

    name: str
    raw_score: Any
    formula_id: str
    weight: float
    norm: float
    adjusted_norm: float | None
    used: float
    critical_floor: float | None
    floor_source: Literal["criterion", "default"] | None
    floor_failed: bool
    floor_margin: float | None
    category: str | None = None
    kind: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    floor_category: str | None = None


@dataclass(frozen=True, slots=True)
class FloorCheck:
    """A critical floor and how the criterion fared against it."""

    criterion: str
    floor: float
    score: float
    margin: float
    failed: bool
    source: Literal["criterion", "default"]
    category: str | None = None


@dataclass(frozen=True, slots=True)
class GradeResult:
    """The outcome of :func:`grade`: verdict, grade, and why.

    Attributes:
        passed: the release verdict: gates pass, ``weighted_score >= pass_threshold`` and no
            floor failed.
        grade: the final letter (``F`` on any gate failure, capped at ``D`` by floors).
        band: the letter the weighted score alone earns (before gates and floors).
        weighted_score: ``round(weighted_0_1 * 100, 2)``; kept for diagnostics even on ``F``.
        weighted_0_1: the unrounded weighted mean in 0..1.
        pass_threshold: the threshold applied, on the 0..100 scale.
        reason: ``passed``, ``hard_gate_failure``, ``floor_failure`` or ``below_threshold``.
        reasons: human-readable reasons the run did not pass (gate reasons first).
        gate_results: every gate evaluated; ``gate_failures`` the failed ones.
        floors: every critical floor with its margin; ``floor_failures`` the missed ones.
        criteria: every criterion, raw and normalized.
        placement: the spec-5.2 explanation of why the run landed in its grade.
        warnings: things worth a look that do not change the verdict.
        profile: the effective scoring profile, when grading went through one.
    """

    passed: bool
    grade: Grade
    band: Grade
    weighted_score: float
    weighted_0_1: float
    pass_threshold: float
    reason: str
    reasons: list[str]
    gate_results: list[GateResult]
    gate_failures: list[GateResult]
    floors: list[FloorCheck]
    floor_failures: list[FloorCheck]
    criteria: list[CriterionResult]
    placement: list[str]
    warnings: list[str] = field(default_factory=list)
    profile: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (lists, dicts, strings, numbers)."""
        return dataclasses.asdict(self)


def band(score: float) -> Grade:
    """The letter band of a 0..100 score (spec 5).

    >>> band(90.0), band(89.99), band(70), band(59.99)
    ('A', 'B', 'C', 'F')
    """
    for letter, lower in BANDS:
        if score >= lower:
            return letter
    return "F"


def grade(
    *,
    hard_gates: Mapping[str, bool | GateResult] | Iterable[GateResult],
    criteria: Sequence[CriterionScore],
    pass_threshold: float = 70.0,
    required_gates: Iterable[str] = REQUIRED_GATES,
    default_floors: Mapping[str, float] | None = DEFAULT_FLOORS,
    use_adjusted: bool = False,
    pairwise_inconsistency_warn: float = 0.10,
    profile: Mapping[str, Any] | None = None,
) -> GradeResult:
    """Grade one run with the deterministic algorithm of spec 5.1.

    Args:
        hard_gates: gate verdicts by name (bools or :class:`GateResult`), or a list of results.
        criteria: the criteria to normalize and aggregate.
        pass_threshold: pass mark on the 0..100 scale.
        required_gates: gates that must be among ``hard_gates``; a missing one counts as
            failed (never passed silently). Pass ``()`` to grade without them.
        default_floors: floors by category/name for criteria that set none; ``None`` or ``{}``
            disables them (the pure 5.1 algorithm).
        use_adjusted: aggregate ``adjusted_norm`` instead of ``norm`` where ``n`` is known
            (for promotion decisions over few samples).
        pairwise_inconsistency_warn: warn when swapped-order inconsistencies exceed this rate.
        profile: the effective profile, recorded in the result.

    Raises:
        ConfigError: no criteria, bad weights, duplicate names, or a bad threshold or floor.
        FormulaError: a raw score its formula cannot normalize.

    Example:
        >>> g = grade(hard_gates={}, required_gates=(), criteria=[
        ...     CriterionScore("correctness", 4, "likert_1_5", weight=0.35, critical_floor=0.70),
        ...     CriterionScore("completeness", 0.9, "zero_one", weight=0.65)])
        >>> g.grade, g.weighted_score, g.passed
        ('B', 84.75, True)
    """
    threshold = _check_threshold(pass_threshold)
    gates = _collect_gates(hard_gates, required_gates)
    results = _normalize_all(criteria, default_floors or {}, use_adjusted)

    num = sum((Fraction(r.weight) * Fraction(r.used) for r in results), Fraction(0))
    den = sum((Fraction(r.weight) for r in results), Fraction(0))
    w01 = num / den
    w100 = round(w01 * 100, 2)
    provisional = band(float(w100))

    gate_failures = [g for g in gates if not g.passed]
    floors = [_floor_check(r) for r in results if r.critical_floor is not None]
    floor_failures = [f for f in floors if f.failed]

    final: Grade = provisional
    if floor_failures and _ORDER.index(final) < _ORDER.index("D"):
        final = "D"
    if gate_failures:
        final = "F"
    # spec 5.1: weighted_100 >= pass_threshold, the threshold read as the number it was written
    # as: a weighted score of 70.70 meets a threshold of 70.7 (the float 70.7 is a bit above)
    meets = at_least(float(w100), threshold)
    passed = not gate_failures and not floor_failures and meets

    return GradeResult(
        passed=passed,
        grade=final,
        band=provisional,
        weighted_score=float(w100),
        weighted_0_1=float(w01),
        pass_threshold=threshold,
        reason=_reason_code(gate_failures, floor_failures, meets),
        reasons=_reasons(gate_failures, floor_failures, float(w100), threshold, meets),
        gate_results=gates,
        gate_failures=gate_failures,
        floors=floors,
        floor_failures=floor_failures,
        criteria=results,
        placement=_placement(final, provisional, float(w100), gates, floors),
        warnings=_warnings(criteria, pairwise_inconsistency_warn),
        profile=dict(profile) if profile is not None else None,
    )


# -- steps ----------------------------------------------------------------------------------------


def _check_threshold(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"pass_threshold must be a number in 0..100, got {value!r}")
    if not 0 <= value <= 100:
        raise ConfigError(f"pass_threshold is on the 0..100 scale, got {value!r}")
    return float(value)


def _collect_gates(
    hard_gates: Mapping[str, bool | GateResult] | Iterable[GateResult],
    required: Iterable[str],
) -> list[GateResult]:
    gates: list[GateResult] = []
    if isinstance(hard_gates, Mapping):
        for name, verdict in hard_gates.items():
            gates.append(_as_gate(name, verdict))
    else:
        for item in hard_gates:
            if not isinstance(item, GateResult):
                raise ConfigError(
                    f"hard_gates must hold GateResult objects, got {type(item).__name__}"
                )
            gates.append(item)
    seen = {g.name for g in gates}
    for name in required:
        if name not in seen:
            gates.append(GateResult(name, False, "required gate was not evaluated"))
    return gates


def _as_gate(name: str, verdict: bool | GateResult) -> GateResult:
    if isinstance(verdict, GateResult):
        return verdict if verdict.name == name else dataclasses.replace(verdict, name=name)
    if not isinstance(verdict, bool):
        raise ConfigError(f"hard gate {name!r} must be True/False or a GateResult, got {verdict!r}")
    return GateResult(name, verdict, "passed" if verdict else "failed")


def _normalize_all(
    criteria: Sequence[CriterionScore], default_floors: Mapping[str, float], use_adjusted: bool
) -> list[CriterionResult]:
    if not criteria:
        raise ConfigError("grade needs at least one criterion")
    names = [c.name for c in criteria]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"duplicate criterion names: {', '.join(dupes)}")
    results = [_normalize_one(c, default_floors, use_adjusted) for c in criteria]
    if sum(r.weight for r in results) <= 0:
        raise ConfigError("criterion weights sum to 0; give at least one a positive weight")
    return results


def _normalize_one(
    c: CriterionScore, default_floors: Mapping[str, float], use_adjusted: bool
) -> CriterionResult:
    weight = c.weight
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise ConfigError(f"criterion {c.name!r}: weight must be a number, got {weight!r}")
    if not math.isfinite(weight) or weight < 0:
        raise ConfigError(f"criterion {c.name!r}: weight must be finite and >= 0, got {weight!r}")
    norm = normalize(c.formula_id, c.raw_score, **c.params)
    adj = adjusted_norm(norm, c.n) if c.n is not None else None
    used = adj if use_adjusted and adj is not None else norm

    try:
        category = known_category(c.category, default_floors)
    except ConfigError as exc:
        raise ConfigError(f"criterion {c.name!r}: {exc}") from None
    floor, source, floor_category = _floor_for(c, default_floors)
    margin = used - floor if floor is not None else None
    failed = floor is not None and not at_least(used, floor)  # spec 5.1: norm_i < floor_i
    return CriterionResult(
        name=c.name,
        raw_score=c.raw_score,
        formula_id=c.formula_id,
        weight=float(weight),
        norm=norm,
        adjusted_norm=adj,
        used=used,
        critical_floor=floor,
        floor_source=source,
        floor_failed=failed,
        floor_margin=margin,
        category=category,
        kind=c.kind,
        params=dict(c.params),
        floor_category=floor_category,
    )


def _floor_for(
    c: CriterionScore, default_floors: Mapping[str, float]
) -> tuple[float | None, Literal["criterion", "default"] | None, str | None]:
    """The criterion's floor, where it came from, and the default floor's category if one."""
    if c.critical_floor is not None:
        return _check_floor(c.name, c.critical_floor), "criterion", None
    key = default_floor_category(c.name, c.category, default_floors)
    if key is not None:
        return _check_floor(c.name, default_floors[key]), "default", key
    return None, None, None


def _check_floor(name: str, floor: float) -> float:
    ok = isinstance(floor, int | float) and not isinstance(floor, bool) and math.isfinite(floor)
    if not ok or not 0.0 <= floor <= 1.0:
        raise ConfigError(
            f"criterion {name!r}: critical_floor must be a normalized value in 0..1, got {floor!r}"
        )
    return float(floor)


def _floor_check(r: CriterionResult) -> FloorCheck:
    assert r.critical_floor is not None and r.floor_margin is not None and r.floor_source
    return FloorCheck(
        r.name,
        r.critical_floor,
        r.used,
        r.floor_margin,
        r.floor_failed,
        r.floor_source,
        r.floor_category,
    )


# -- explanation ----------------------------------------------------------------------------------


def _reason_code(gates: list[GateResult], floors: list[FloorCheck], meets: bool) -> str:
    if gates:
        return "hard_gate_failure"
    if floors:
        return "floor_failure"
    return "passed" if meets else "below_threshold"


def _reasons(
    gates: list[GateResult], floors: list[FloorCheck], score: float, threshold: float, meets: bool
) -> list[str]:
    out = [f"hard gate {g.name} failed: {g.reason or 'no reason given'}" for g in gates]
    out += [
        "critical floor missed: {} {} < {}".format(f.criterion, *_apart(f.score, f.floor))
        for f in floors
        if f.failed
    ]
    if not meets:
        out.append(f"weighted score {score:.2f} is below the pass threshold {threshold:g}")
    return out


def _placement(
    final: Grade,
    provisional: Grade,
    score: float,
    gates: list[GateResult],
    floors: list[FloorCheck],
) -> list[str]:
    lines = [f"weighted score {score:.2f} falls in band {provisional} ({_band_text(provisional)})"]
    failed = [g for g in gates if not g.passed]
    if failed:
        names = ", ".join(g.name for g in failed)
        lines.append(f"grade F: hard gate failure ({names}); the weighted score is diagnostic")
    elif gates:
        lines.append(f"all {len(gates)} hard gates passed")
    for f in floors:
        verb = "misses" if f.failed else "clears"
        which = f" (default {f.category} floor)" if f.category else ""
        value, bound = (
            _apart(f.score, f.floor) if f.failed else (f"{f.score:.3f}", f"{f.floor:.2f}")
        )
        by = f"{abs(f.margin):.3f}"
        if f.failed and by == "0.000":
            by = f"{abs(f.margin):.1e}"
        lines.append(f"{f.criterion} {value} {verb} its floor {bound} by {by}{which}")
    if not failed and any(f.failed for f in floors) and provisional != final:
        lines.append(f"grade capped at D (from {provisional}) by a missed critical floor")
    if final == "A":
        thin = [f for f in floors if not at_least(f.margin, _A_MARGIN)]
        for f in thin:
            lines.append(
                f"note: A expects floors cleared by >= {_A_MARGIN:.2f}; "
                f"{f.criterion} clears by {f.margin:.3f}"
            )
    if final == "C" and any(not at_least(f.margin, _A_MARGIN) for f in floors if not f.failed):
        lines.append("floors pass near the boundary")
    return lines


def _apart(score: float, floor: float) -> tuple[str, str]:
    """A missed floor's score (3 decimals) and floor (2), with more where they would look equal."""
    shown, bound = f"{score:.3f}", f"{floor:.2f}"
    if float(shown) < float(bound):
        return shown, bound
    return shown_apart(score, floor, 3)


def _band_text(letter: Grade) -> str:
    return {"A": "90-100", "B": "80-89.99", "C": "70-79.99", "D": "60-69.99", "F": "<60"}[letter]


def _warnings(criteria: Sequence[CriterionScore], inconsistency_warn: float) -> list[str]:
    out: list[str] = []
    for c in criteria:
        if c.kind == "judge" and c.calibrated is not True:
            out.append(f"criterion {c.name!r} is judge-scored without a human calibration check")
        if c.formula_id == "pairwise" and isinstance(c.raw_score, Mapping):
            counts = {
                k: float(c.raw_score.get(k, 0)) for k in ("wins", "losses", "ties", "inconsistent")
            }
            total = sum(counts.values())
            rate = counts["inconsistent"] / total if total else 0.0
            if rate > inconsistency_warn:
                out.append(
                    f"criterion {c.name!r}: swapped-order inconsistency rate {rate:.2f} exceeds "
                    f"{inconsistency_warn:.2f}; the judge shows position bias"
                )
    kinds = {c.kind for c in criteria if c.weight > 0}
    if kinds == {"overlap"}:
        out.append(
            "only overlap metrics (BLEU/ROUGE-style) are weighted; add an objective or "
            "judge criterion"
        )
    return out
