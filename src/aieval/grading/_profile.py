"""Scoring profiles (spec 6 and 13): gates, weighted criteria and thresholds per workflow family.

Profiles A-D ship as YAML in ``aieval/grading/profiles``. A profile is selected by id (``"B"``),
by workflow family (``"rag"``) or by file, and can be overridden per workflow; the effective
profile, overrides included, is recorded with every grade made through it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aieval._keys import suggestion
from aieval._yaml import load_yaml_file, load_yaml_text
from aieval.errors import ConfigError, RubricError
from aieval.grading._formulas import get_formula
from aieval.grading._gate_result import GateResult
from aieval.grading._gates import REQUIRED_GATES, gate_known
from aieval.grading._grade import (
    DEFAULT_FLOORS,
    CriterionScore,
    GradeResult,
    grade,
    known_category,
)
from aieval.grading._rubric import Rubric, _format_errors, check_score_names, criterion_score

__all__ = [
    "BUILTIN_PROFILES",
    "Profile",
    "ProfileCriterion",
    "SloBounds",
    "load_profile",
    "profile_for_family",
]

#: Ids of the profiles shipped with aieval.
BUILTIN_PROFILES: tuple[str, ...] = ("A", "B", "C", "D")

Kind = Literal["objective", "judge", "efficiency", "overlap"]
_OVERRIDE_KEYS = ("weights", "floors", "pass_threshold", "extra_gates", "slo")


class SloBounds(BaseModel):
    """A lower-is-better SLO: ``good`` scores 1.0, ``bad`` (and worse) scores 0.0."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    good: float = Field(ge=0, allow_inf_nan=False)
    bad: float = Field(ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _ordered(self) -> SloBounds:
        if self.bad <= self.good:
            raise ValueError(f"bad ({self.bad:g}) must be greater than good ({self.good:g})")
        return self


class ProfileCriterion(BaseModel):
    """A weighted criterion of a profile.

    Attributes:
        name: unique within the profile.
        weight: relative weight (>= 0).
        formula_id: the formula normalizing its raw score.
        kind: ``objective``, ``judge``, ``efficiency`` or ``overlap`` (BLEU/ROUGE-style).
        measures: what it measures, in one sentence.
        critical_floor: normalized floor in 0..1; otherwise the profile's floor for
            ``category`` applies, if any.
        category: ``correctness``, ``safety``, ``validation`` or another category the
            profile's ``floors`` name links it to that floor (any case; kept lower-case); any
            other category is refused with the nearest known one.
        metric: for ``lower_is_better``: the ``slo`` entry giving ``slo_good``/``slo_bad``.
        params: explicit formula parameters (win over ``metric``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    weight: float = Field(ge=0, allow_inf_nan=False)
    formula_id: str
    kind: Kind
    measures: str = ""
    critical_floor: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    category: str | None = None
    metric: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("category")
    @classmethod
    def _lower_category(cls, value: str | None) -> str | None:
        return value.strip().lower() if value is not None else None

    @field_validator("formula_id")
    @classmethod
    def _known_formula(cls, value: str) -> str:
        try:
            get_formula(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value


class Profile(BaseModel):
    """A scoring profile for one workflow family.

    Attributes:
        id: ``A``..``D`` for the built-ins.
        name: human name.
        description: free text.
        families: workflow family names that select this profile.
        required_gates: gates every run must pass (the five of spec 3 by default).
        gates: the family's own hard gates (spec 6).
        criteria: weighted criteria.
        pass_threshold: pass mark on the 0..100 scale.
        floors: critical floors by category.
        swe: SWE test thresholds (``fail_to_pass``, ``pass_to_pass``).
        pairwise_inconsistency_warn: warn above this swapped-order inconsistency rate.
        slo: lower-is-better SLOs by metric (``latency_s``, ``cost_usd``, ``retries``).
        base: the profile this one was derived from by overrides.
        overrides: the overrides applied to ``base``.
        rubric_id: the rubric whose criteria replaced the profile's, if any.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    families: list[str] = Field(default_factory=list)
    required_gates: list[str] = Field(default_factory=lambda: list(REQUIRED_GATES))
    gates: list[str] = Field(default_factory=list)
    criteria: list[ProfileCriterion] = Field(min_length=1)
    pass_threshold: float = Field(default=70.0, ge=0, le=100, allow_inf_nan=False)
    floors: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_FLOORS))
    swe: dict[str, float] = Field(
        default_factory=lambda: {"fail_to_pass": 1.0, "pass_to_pass": 0.95}
    )
    pairwise_inconsistency_warn: float = Field(default=0.10, ge=0, le=1)
    slo: dict[str, SloBounds] = Field(default_factory=dict)
    base: str | None = None
    overrides: dict[str, Any] = Field(default_factory=dict)
    rubric_id: str | None = None

    @field_validator("floors")
    @classmethod
    def _floors_in_range(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in value.items() if not (math.isfinite(v) and 0 <= v <= 1)}
        if bad:
            raise ValueError(f"floors must be normalized values in 0..1, got {bad}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        names = [c.name for c in self.criteria]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate criterion names: {', '.join(dupes)}")
        if sum(c.weight for c in self.criteria) <= 0:
            raise ValueError("criterion weights sum to 0; give at least one a positive weight")
        if {c.kind for c in self.criteria if c.weight > 0} == {"overlap"}:
            raise ValueError(
                "only overlap metrics (BLEU/ROUGE-style) carry weight; they are not a "
                "sufficient quality signal: add an objective or judge criterion"
            )
        unknown = [g for g in self.gate_names if not gate_known(g)]
        if unknown:
            raise ValueError(
                f"unknown gates: {', '.join(unknown)}; register them with register_gate "
                "before loading the profile, or fix the names"
            )
        for c in self.criteria:
            try:
                known_category(c.category, self.floors)
            except ConfigError as exc:
                raise ValueError(f"criterion {c.name!r}: {exc}") from None
            if c.metric is not None and c.metric not in self.slo and not c.params:
                raise ValueError(
                    f"criterion {c.name!r}: metric {c.metric!r} has no entry under 'slo'"
                )
        return self

    @property
    def gate_names(self) -> list[str]:
        """Every gate a run must pass: required gates, then the profile's, without repeats."""
        return list(dict.fromkeys([*self.required_gates, *self.gates]))

    def criterion_scores(
        self, raw_scores: Mapping[str, Any], *, calibrated: Iterable[str] = ()
    ) -> list[CriterionScore]:
        """Pair raw scores with the profile's criteria.

        ``calibrated`` names the judge criteria whose judge was checked against human labels.

        Raises:
            ConfigError: a criterion has no score, or a score names no criterion.
        """
        check_score_names(
            f"profile {self.id!r}", [c.name for c in self.criteria], raw_scores, ConfigError
        )
        checked = set(calibrated)
        return [
            criterion_score(c, raw_scores[c.name], self._params(c), c.kind, c.name in checked)
            for c in self.criteria
        ]

    def _params(self, c: ProfileCriterion) -> dict[str, Any]:
        if c.params or c.metric is None:
            return dict(c.params)
        bounds = self.slo[c.metric]
        return {"slo_good": bounds.good, "slo_bad": bounds.bad}

    def grade(
        self,
        *,
        hard_gates: Mapping[str, bool | GateResult] | Iterable[GateResult],
        scores: Mapping[str, Any],
        calibrated: Iterable[str] = (),
        use_adjusted: bool = False,
    ) -> GradeResult:
        """Grade one run under this profile; the result records the effective profile.

        Every gate of :attr:`gate_names` must be among ``hard_gates`` (a missing one fails),
        and ``scores`` must give a raw score for every criterion. ``calibrated`` names judge
        criteria whose judge was checked against human labels (others draw a warning).
        """
        return grade(
            hard_gates=hard_gates,
            criteria=self.criterion_scores(scores, calibrated=calibrated),
            pass_threshold=self.pass_threshold,
            required_gates=self.gate_names,
            default_floors=self.floors,
            use_adjusted=use_adjusted,
            pairwise_inconsistency_warn=self.pairwise_inconsistency_warn,
            profile=self.model_dump(mode="json"),
        )

    def with_overrides(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        floors: Mapping[str, float | None] | None = None,
        pass_threshold: float | None = None,
        extra_gates: Iterable[str] | None = None,
        slo: Mapping[str, Mapping[str, float]] | None = None,
    ) -> Profile:
        """A copy with per-workflow overrides applied and recorded.

        Args:
            weights: new weights by criterion name.
            floors: by criterion name (sets that criterion's floor; ``None`` removes it), or by
                category (sets the profile floor for that category).
            pass_threshold: new pass mark on the 0..100 scale.
            extra_gates: more gates every run must pass.
            slo: new SLO bounds by metric, e.g. ``{"latency_s": {"good": 2, "bad": 10}}``.

        Raises:
            ConfigError: an override names an unknown criterion or category, or has a bad value.
        """
        gates_added = list(extra_gates) if extra_gates is not None else None
        given = {
            "weights": weights,
            "floors": floors,
            "pass_threshold": pass_threshold,
            "extra_gates": gates_added,
            "slo": slo,
        }
        applied = {k: v for k, v in given.items() if v is not None}
        data = self.model_dump()
        names = {c.name for c in self.criteria}
        if weights is not None:
            _check_names("weights", weights, names)
            for c in data["criteria"]:
                c["weight"] = weights.get(c["name"], c["weight"])
        if floors is not None:
            _override_floors(data, floors, names)
        if pass_threshold is not None:
            data["pass_threshold"] = pass_threshold
        if gates_added is not None:
            data["gates"] = list(dict.fromkeys([*data["gates"], *gates_added]))
        if slo is not None:
            data["slo"] = {**data["slo"], **{k: dict(v) for k, v in slo.items()}}
        data["base"] = self.base or self.id
        data["overrides"] = _merge_overrides(self.overrides, applied)
        try:
            return Profile.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(
                _format_errors(exc, data, f"profile {self.id!r} overrides", Profile)
            ) from None

    def with_rubric(self, rubric: Rubric) -> Profile:
        """A copy whose criteria are the rubric's (judge-scored), keeping gates and thresholds."""
        data = self.model_dump()
        data["criteria"] = [
            {
                "name": c.name,
                "weight": c.weight,
                "formula_id": c.formula_id,
                "kind": "judge",
                "measures": c.definition,
                "critical_floor": c.critical_floor,
                "category": c.category,
                "params": dict(c.params),
            }
            for c in rubric.criteria
        ]
        if rubric.pass_threshold is not None:
            data["pass_threshold"] = rubric.pass_threshold
        data["base"] = self.base or self.id
        data["rubric_id"] = rubric.rubric_id
        return Profile.model_validate(data)


def _check_names(what: str, keys: Iterable[str], names: set[str]) -> None:
    unknown = sorted(k for k in keys if k not in names)
    if unknown:
        raise ConfigError(
            f"{what} override names unknown criteria: {', '.join(unknown)}; "
            f"known criteria: {', '.join(sorted(names))}"
        )


def _override_floors(
    data: dict[str, Any], floors: Mapping[str, float | None], names: set[str]
) -> None:
    categories = set(data["floors"]) | set(DEFAULT_FLOORS)
    unknown = sorted(k for k in floors if k not in names and k not in categories)
    if unknown:
        raise ConfigError(
            f"floors override names unknown criteria or categories: {', '.join(unknown)}; "
            f"known criteria: {', '.join(sorted(names))}; categories: "
            f"{', '.join(sorted(categories))}"
        )
    for key, value in floors.items():
        if key in names:
            for c in data["criteria"]:
                if c["name"] == key:
                    c["critical_floor"] = value
        elif value is None:
            data["floors"].pop(key, None)
        else:
            data["floors"][key] = value


def _merge_overrides(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        elif isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        else:
            merged[key] = value
    return merged


@functools.cache
def _builtin_data(profile_id: str) -> dict[str, Any]:
    text = (
        resources.files("aieval.grading")
        .joinpath(f"profiles/{profile_id}.yaml")
        .read_text(encoding="utf-8")
    )
    data = load_yaml_text(text, f"built-in profile {profile_id}")
    assert isinstance(data, dict)
    return data


def _families() -> dict[str, str]:
    table: dict[str, str] = {}
    for pid in BUILTIN_PROFILES:
        for family in _builtin_data(pid).get("families", []):
            table[_family_key(family)] = pid
    return table


def _family_key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def profile_for_family(family: str) -> str:
    """The built-in profile id for a workflow family (``"rag"`` -> ``"C"``).

    >>> profile_for_family("code_repair"), profile_for_family("tool-use")
    ('A', 'D')
    """
    key = _family_key(family)
    if key.upper() in BUILTIN_PROFILES:
        return key.upper()
    table = _families()
    if key not in table:
        raise ConfigError(
            f"unknown profile {family!r}: give a profile id ({', '.join(BUILTIN_PROFILES)}), "
            f"a profile YAML file, or a workflow family: {', '.join(sorted(table))}"
        )
    return table[key]


def load_profile(
    name: str | Path | Mapping[str, Any] | Profile,
    *,
    overrides: Mapping[str, Any] | None = None,
) -> Profile:
    """Load a profile by id (``"A"``..``"D"``), workflow family, YAML file, or mapping.

    Args:
        name: a built-in id, a family name such as ``"rag"``, a path to a YAML file, data, or a
            :class:`Profile` (to apply ``overrides`` to it).
        overrides: applied with :meth:`Profile.with_overrides` (keys ``weights``, ``floors``,
            ``pass_threshold``, ``extra_gates``, ``slo``).

    Raises:
        RubricError: an invalid profile file (names the file and field).
        ConfigError: an unknown id or family, or bad overrides.

    Example:
        >>> p = load_profile("dag", overrides={"pass_threshold": 75})
        >>> p.id, p.pass_threshold, p.base
        ('B', 75.0, 'B')
    """
    if isinstance(name, Profile):
        profile = name
    elif isinstance(name, Mapping):
        profile = _validate(dict(name), "<profile>")
    elif isinstance(name, Path) or str(name).endswith((".yaml", ".yml")):
        profile = _validate(load_yaml_file(name), str(name))
    else:
        pid = profile_for_family(str(name))
        profile = _validate(_builtin_data(pid), f"built-in profile {pid}")
    if overrides:
        unknown = sorted(set(overrides) - set(_OVERRIDE_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown profile override keys: {', '.join(unknown)}; "
                f"{suggestion(unknown[0], _OVERRIDE_KEYS)}"
            )
        profile = profile.with_overrides(**overrides)
    return profile


def _validate(data: Any, label: str) -> Profile:
    if not isinstance(data, Mapping):
        raise RubricError(f"{label}: a profile must be a mapping, got {type(data).__name__}")
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise RubricError(_format_errors(exc, data, label, Profile)) from None
