"""Rubric schema (spec 7) and loading from YAML files or workflow ``evaluation:`` blocks.

Two shapes load into the same :class:`Rubric`:

* a rubric file: ``rubric_id``, ``version``, ``criteria`` with ``scale: [1, 5]`` and ``anchors``;
* a workflow definition whose ``evaluation:`` block has ``rubric_id``, ``scoring_profile`` and
  criteria whose ``scale`` maps each point (``"1"``..``"5"``) to its anchor text.

Critical floors are stored normalized (0..1). A floor may be written on the criterion's raw scale
or already normalized; the rule (documented in ``docs/grading.md``) is: ``{raw: x}`` and
``{normalized: x}`` say it explicitly; a bare integer on a scale other than 0..1 is a raw scale
point; any other bare number is normalized and must lie in 0..1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aieval._keys import known_fields, unknown_key
from aieval._yaml import load_yaml_file
from aieval.errors import AievalError, FormulaError, RubricError
from aieval.grading._formulas import get_formula, normalize
from aieval.grading._grade import CriterionScore, known_category

__all__ = ["Criterion", "Rubric", "load_rubric", "validate_rubric_files"]

_MAX_SCALE_POINTS = 101


class Criterion(BaseModel):
    """One rubric criterion (spec 7).

    Attributes:
        name: unique within the rubric.
        definition: what the criterion measures.
        evidence_required: what a grader must point to.
        scale: the raw scale ``(low, high)``.
        anchors: description of each score point, keyed by the point (``"1"``..``"5"``).
        weight: relative weight (>= 0).
        critical_floor: normalized floor in 0..1, if any.
        critical_floor_raw: the floor as written, when it was written on the raw scale.
        formula_id: the formula normalizing raw scores; inferred from the scale when omitted.
        params: extra formula parameters.
        category: ``correctness``/``safety``/``validation`` (any case; kept lower-case) selects
            a default floor; any other category is refused with the nearest known one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    evidence_required: list[str] = Field(min_length=1)
    scale: tuple[float, float]
    anchors: dict[str, str]
    weight: float = Field(ge=0, allow_inf_nan=False)
    critical_floor: float | None = None
    critical_floor_raw: float | None = None
    formula_id: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    category: str | None = None
    floor_as_written: Any = Field(default=None, exclude=True, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _accept_shapes(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        out = dict(data)
        scale = out.get("scale")
        if isinstance(scale, Mapping):
            if "anchors" in out:
                raise ValueError(
                    "field 'scale': scale maps points to anchors, so leave out 'anchors' "
                    "(or write scale: [low, high] with a separate anchors map)"
                )
            out["anchors"] = {str(k): v for k, v in scale.items()}
            out["scale"] = _scale_from_points(scale.keys())
        elif isinstance(scale, str):
            out["scale"] = _scale_from_text(scale)
        if isinstance(out.get("anchors"), Mapping):
            out["anchors"] = {_point_key(k): v for k, v in out["anchors"].items()}
        if "floor_as_written" in out:
            raise ValueError("field 'floor_as_written': is not a known field")
        raw_floor = out.pop("critical_floor_raw", None)
        floor = out.pop("critical_floor", None)
        out["floor_as_written"] = {"raw": raw_floor} if raw_floor is not None else floor
        return out

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str | None) -> str | None:
        try:
            return known_category(value)
        except AievalError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("scale")
    @classmethod
    def _check_scale(cls, value: tuple[float, float]) -> tuple[float, float]:
        low, high = value
        if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
            raise ValueError(f"scale must be [low, high] with low < high, got [{low:g}, {high:g}]")
        return value

    @model_validator(mode="after")
    def _check_consistency(self) -> Criterion:
        low, high = self.scale
        if not self.formula_id:
            inferred = _infer_formula(low, high)
            object.__setattr__(self, "formula_id", inferred)
            if inferred == "linear" and not self.params:
                object.__setattr__(self, "params", {"low": low, "high": high})
        try:
            get_formula(self.formula_id)
        except AievalError as exc:
            raise ValueError(f"field 'formula_id': {exc}") from None
        _check_anchors(self.anchors, low, high)
        if self.floor_as_written is not None:
            normalized, raw = _convert_floor(self, self.floor_as_written)
            object.__setattr__(self, "critical_floor", normalized)
            object.__setattr__(self, "critical_floor_raw", raw)
            # Only the converted floor is kept, so re-validating a dump gives an equal model.
            object.__setattr__(self, "floor_as_written", None)
        return self


def _point_key(key: Any) -> str:
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)


def _scale_from_points(keys: Iterable[Any]) -> list[float]:
    points: list[float] = []
    for key in keys:
        try:
            points.append(float(key))
        except (TypeError, ValueError):
            raise ValueError(
                f"field 'scale': point {key!r} is not a number; key each anchor by its score"
            ) from None
    if len(points) < 2:
        raise ValueError("field 'scale': needs at least two score points")
    return [min(points), max(points)]


def _scale_from_text(text: str) -> list[float]:
    low, sep, high = text.partition("..")
    try:
        if not sep:
            raise ValueError
        return [float(low), float(high)]
    except ValueError:
        raise ValueError(f"field 'scale': write [low, high] or 'low..high', got {text!r}") from None


def _infer_formula(low: float, high: float) -> str:
    known = {(1.0, 5.0): "likert_1_5", (-2.0, 2.0): "likert_neg2_2", (0.0, 1.0): "zero_one"}
    return known.get((low, high), "linear")


def _check_anchors(anchors: Mapping[str, str], low: float, high: float) -> None:
    for key, text in anchors.items():
        try:
            point = float(key)
        except ValueError:
            raise ValueError(f"field 'anchors': key {key!r} is not a score point") from None
        if not low <= point <= high:
            raise ValueError(f"field 'anchors': point {key} is outside the scale {low:g}..{high:g}")
        if not str(text).strip():
            raise ValueError(f"field 'anchors': point {key} has an empty description")
    if low.is_integer() and high.is_integer() and high - low < _MAX_SCALE_POINTS:
        missing = [str(p) for p in range(int(low), int(high) + 1) if str(p) not in anchors]
        if missing:
            raise ValueError(
                f"field 'anchors': every score point needs an anchor; missing {', '.join(missing)}"
            )


def _convert_floor(c: Criterion, written: Any) -> tuple[float, float | None]:
    """Return ``(normalized_floor, raw_floor_or_None)`` for a floor as written."""
    low, high = c.scale
    if isinstance(written, Mapping):
        keys = set(written)
        if keys == {"normalized"}:
            return _normalized_floor(written["normalized"]), None
        if keys == {"raw"}:
            return _raw_floor(c, written["raw"]), float(written["raw"])
        raise ValueError(
            "field 'critical_floor': write a number, {raw: x} or {normalized: x}, "
            f"got keys {sorted(map(str, keys))}"
        )
    if isinstance(written, bool) or not isinstance(written, int | float):
        raise ValueError(f"field 'critical_floor': must be a number, got {written!r}")
    if isinstance(written, int) and (low, high) != (0.0, 1.0):
        return _raw_floor(c, written), float(written)
    if not 0.0 <= written <= 1.0:
        raise ValueError(
            f"field 'critical_floor': {written!r} is not a normalized value in 0..1; write a raw "
            f"scale point as an integer or as {{raw: {written!r}}}"
        )
    return float(written), None


def _normalized_floor(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not 0.0 <= value <= 1.0:
        raise ValueError(f"field 'critical_floor': normalized floor must be in 0..1, got {value!r}")
    return float(value)


def _raw_floor(c: Criterion, value: Any) -> float:
    low, high = c.scale
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not low <= value <= high:
        raise ValueError(
            f"field 'critical_floor': raw floor {value!r} is outside the scale {low:g}..{high:g}"
        )
    formula = get_formula(c.formula_id)
    if formula.scale is not None and formula.scale != (low, high):
        lo, hi = formula.scale
        raise ValueError(
            f"field 'critical_floor': raw floor {value!r} is on the scale {low:g}..{high:g}, but "
            f"formula {c.formula_id!r} reads raw values on {lo:g}..{hi:g}; write the floor "
            "normalized (0..1) or fix formula_id"
        )
    try:
        return normalize(c.formula_id, value, **c.params)
    except FormulaError as exc:
        raise ValueError(f"field 'critical_floor': {exc}") from None


class Rubric(BaseModel):
    """A versioned set of criteria (spec 7).

    Attributes:
        rubric_id: stable identifier recorded with every result.
        version: rubric version (numbers are kept as text).
        description: free text.
        scoring_profile: the profile a workflow's evaluation block selects, if any.
        pass_threshold: a rubric-specific pass mark on the 0..100 scale, if any.
        criteria: the criteria, unique by name.
        source: the file the rubric was loaded from.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rubric_id: str = Field(min_length=1)
    version: str = "1"
    description: str = ""
    scoring_profile: str | None = None
    pass_threshold: float | None = Field(default=None, ge=0, le=100, allow_inf_nan=False)
    criteria: list[Criterion] = Field(min_length=1)
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _apply_weights(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        out = dict(data)
        if isinstance(out.get("version"), int | float) and not isinstance(out["version"], bool):
            out["version"] = str(out["version"])
        weights = out.pop("weights", None)
        if weights is None:
            return out
        criteria = out.get("criteria")
        if not isinstance(weights, Mapping) or not isinstance(criteria, list):
            raise ValueError("field 'weights': must map criterion names to weights")
        names = {c.get("name") for c in criteria if isinstance(c, Mapping)}
        unknown = sorted(str(k) for k in weights if k not in names)
        if unknown:
            raise ValueError(f"field 'weights': unknown criteria {', '.join(unknown)}")
        out["criteria"] = [
            {**c, "weight": weights[c["name"]]}
            if isinstance(c, Mapping) and c.get("name") in weights
            else c
            for c in criteria
        ]
        return out

    @field_validator("criteria")
    @classmethod
    def _unique(cls, value: list[Criterion]) -> list[Criterion]:
        names = [c.name for c in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate criterion names: {', '.join(dupes)}")
        if sum(c.weight for c in value) <= 0:
            raise ValueError("criterion weights sum to 0; give at least one a positive weight")
        return value

    def criterion(self, name: str) -> Criterion:
        """The criterion called ``name``."""
        for c in self.criteria:
            if c.name == name:
                return c
        raise RubricError(f"rubric {self.rubric_id!r} has no criterion {name!r}")

    def criterion_scores(self, raw_scores: Mapping[str, Any]) -> list[CriterionScore]:
        """Pair raw scores with the rubric's criteria, ready for :func:`grade`.

        Raises:
            RubricError: a criterion has no score, or a score names no criterion.
        """
        check_score_names(
            f"rubric {self.rubric_id!r}", [c.name for c in self.criteria], raw_scores, RubricError
        )
        return [criterion_score(c, raw_scores[c.name], c.params, "judge") for c in self.criteria]


def load_rubric(source: str | Path | Mapping[str, Any]) -> Rubric:
    """Load and validate a rubric file, a workflow file's ``evaluation:`` block, or a mapping.

    Raises:
        RubricError: the file is unreadable, too large, not YAML, or not a valid rubric; the
            message names the file, the criterion and the field.

    Example:
        >>> r = load_rubric({"rubric_id": "demo", "criteria": [{
        ...     "name": "correctness", "definition": "Meets the spec.",
        ...     "evidence_required": ["mapping"], "weight": 1, "critical_floor": 3,
        ...     "scale": {"1": "bad", "2": "weak", "3": "ok", "4": "good", "5": "great"}}]})
        >>> r.criteria[0].formula_id, r.criteria[0].critical_floor
        ('likert_1_5', 0.5)
    """
    if isinstance(source, Mapping):
        data: Any = dict(source)
        label = "<rubric>"
    else:
        label = str(source)
        data = load_yaml_file(source)
    return _build(data, label)


def _build(data: Any, label: str) -> Rubric:
    if not isinstance(data, Mapping):
        raise RubricError(
            f"{label}: the top level must be a mapping with rubric_id and criteria, "
            f"got {type(data).__name__}"
        )
    if "criteria" not in data and isinstance(data.get("evaluation"), Mapping):
        block = dict(data["evaluation"])
        if "version" not in block and data.get("version") is not None:
            block["version"] = data["version"]
        data, label = block, f"{label} (evaluation block)"
    try:
        rubric = Rubric.model_validate({**data, "source": None if label == "<rubric>" else label})
    except ValidationError as exc:
        raise RubricError(_format_errors(exc, data, label)) from None
    return rubric


def _format_errors(
    exc: ValidationError,
    data: Mapping[str, Any],
    label: str,
    model: type[BaseModel] | None = None,
) -> str:
    lines = [_format_one(err, data, model or Rubric) for err in exc.errors()]
    if len(lines) == 1:
        return f"{label}: {lines[0]}"
    return f"{label}: {len(lines)} problems:\n" + "\n".join(f"  - {line}" for line in lines)


def _format_one(err: Any, data: Mapping[str, Any], model: type[BaseModel]) -> str:
    full_loc = list(err["loc"])
    loc = list(full_loc)
    msg: str = err["msg"].removeprefix("Value error, ")
    where: list[str] = []
    if len(loc) >= 2 and loc[0] == "criteria" and isinstance(loc[1], int):
        where.append(_criterion_label(data, loc[1]))
        loc = loc[2:]
    if loc:
        where.append(f"field {_path(loc)!r}")
    if err["type"] == "missing":
        msg = "is required"
    elif err["type"] == "extra_forbidden":
        known = known_fields(model, full_loc[:-1])
        msg = f"is not a known field: {unknown_key(full_loc[-1], known)}"
    elif not msg.startswith("field ") and _scalar(err.get("input")):
        msg = f"{msg} (got {err['input']!r})"
    prefix = ", ".join(where)
    return f"{prefix}: {msg}" if prefix else msg


def _criterion_label(data: Mapping[str, Any], index: int) -> str:
    criteria = data.get("criteria")
    name = None
    if isinstance(criteria, list) and index < len(criteria):
        item = criteria[index]
        name = item.get("name") if isinstance(item, Mapping) else None
    return f"criterion {name!r} (criteria[{index}])" if name else f"criteria[{index}]"


def _path(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def validate_rubric_files(paths: Iterable[str | Path]) -> list[tuple[str, str | None]]:
    """Validate rubric files; one ``(path, error message or None)`` per path, in order."""
    results: list[tuple[str, str | None]] = []
    for path in paths:
        try:
            load_rubric(Path(path))
        except RubricError as exc:
            results.append((str(path), str(exc)))
        else:
            results.append((str(path), None))
    return results


class _Criterion(Protocol):
    """What a rubric's or a profile's criterion gives every score of it."""

    @property
    def name(self) -> str: ...
    @property
    def formula_id(self) -> str: ...
    @property
    def weight(self) -> float: ...
    @property
    def critical_floor(self) -> float | None: ...
    @property
    def category(self) -> str | None: ...


def criterion_score(
    c: _Criterion,
    raw: Any,
    params: Mapping[str, Any],
    kind: str | None,
    calibrated: bool | None = None,
) -> CriterionScore:
    """Raw score ``raw`` paired with criterion ``c`` (``params``, ``kind`` and ``calibrated``
    as its kind of criterion sets them)."""
    floor, category = c.critical_floor, c.category
    return CriterionScore(
        c.name, raw, c.formula_id, c.weight, floor, params, category, kind, calibrated=calibrated
    )


def check_score_names(
    owner: str,
    criteria: list[str],
    raw_scores: Mapping[str, Any],
    error: type[Exception],
) -> None:
    """Raise ``error`` naming the criteria without a score and the scores without a criterion."""
    missing = [name for name in criteria if name not in raw_scores]
    unknown = sorted(set(raw_scores) - set(criteria))
    if missing or unknown:
        raise error(
            f"{owner}: scores do not match its criteria"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
        )
