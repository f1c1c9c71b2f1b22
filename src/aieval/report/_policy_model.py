"""The promotion policy's settings, validated, and read from YAML or JSON."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aieval._json import loads_strict
from aieval._keys import field_problems
from aieval._yaml import load_yaml_file
from aieval.errors import ConfigError
from aieval.report._intervals import (
    DEFAULT_BOOTSTRAP_MAX_N,
    BootstrapMaxN,
    IntervalMethod,
    IntervalPolicy,
)
from aieval.report._samples import SEVERE_KEYWORDS

__all__ = ["SEVERE_GATES", "PromotionPolicy"]

#: Gates whose failure is severe whatever their name (validation and tool-safety contracts).
SEVERE_GATES: tuple[str, ...] = (
    "schema_contract_valid",
    "tool_call_schema_valid",
    "no_forbidden_tool_invoked",
)


class PromotionPolicy(BaseModel):
    """When a candidate may replace its baseline; every rule must hold (spec 10, defaults 13).

    Example:
        >>> PromotionPolicy(noninferiority_margin=2.0).alpha
        0.05
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    gate_failure_tolerance: float = Field(default=0.0, ge=0.0, le=1.0)
    """Rule 1: how much higher (as a fraction: 0.02 = two percentage points) the candidate's
    hard-gate failure rate may be than the baseline's, overall and for each gate."""

    noninferiority_margin: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    """Rule 2: weighted-score points (0..100) the candidate may lose and still be non-inferior;
    1.0 is the spec's near-equal band (5.2). On a 0/1 metric (every score 0 or 100) a point is
    a percentage point of the proportion: 1.0 allows a drop from 70% to 69%."""

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Rule 2: one-sided significance level of the non-inferiority test."""

    method: Literal["auto", "t", "bootstrap-t", "proportion"] = "auto"
    """Rule 2: the test. ``auto`` uses the paired-proportion score test when every score is 0 or
    100 (a 0/1 metric), else the studentized bootstrap, or the paired t-test from
    ``bootstrap_max_n`` examples on when ``interval_method`` is ``auto`` (see
    ``docs/reports.md``). ``bootstrap-t`` forces the bootstrap at any size."""

    interval_method: IntervalMethod = "auto"
    """Intervals and tests by size: ``auto`` draws closed forms from ``bootstrap_max_n`` paired
    examples on (the paired t interval and test; Tango's for 0/1 metrics), ``bootstrap`` the
    seeded bootstrap at any size. The comparison's metric rows follow it too."""

    bootstrap_max_n: BootstrapMaxN = DEFAULT_BOOTSTRAP_MAX_N
    """The paired examples from which ``interval_method: auto`` uses closed forms."""

    n_resamples: int = Field(default=2000, ge=99)
    """Rule 2: resamples of the studentized bootstrap."""

    seed: int = Field(default=0, ge=0)
    """Rule 2: bootstrap seed, so the same runs always get the same decision."""

    floor_regression_tolerance: int = Field(default=0, ge=0)
    """Rule 3: extra critical-floor violations the candidate may have, per criterion."""

    severe_gates: tuple[str, ...] = SEVERE_GATES
    """Rule 4: gates whose failure is severe (besides names containing a severe keyword)."""

    severe_keywords: tuple[str, ...] = SEVERE_KEYWORDS
    """Rule 4: a gate, or a floored criterion, whose name contains one of these is severe."""

    severe_tolerance: int = Field(default=0, ge=0)
    """Rule 4: extra examples with a severe failure the candidate may have."""

    example_delta: float = Field(default=5.0, ge=0.0)
    """A weighted-score drop (rise) of at least this many points marks an example as a
    regression (improvement)."""

    pairwise_inconsistency_warning: float = Field(default=0.10, ge=0.0, le=1.0)
    """Judge parse-failure or swapped-order inconsistency rates above this draw a warning."""

    min_paired: int = Field(default=60, ge=0)
    """Fewer examples scored in both runs than this is inconclusive. 60 is the rule of three
    for 1 example in 20: a regression confined to 5% of examples shows up among 60 paired
    examples 95% of the time (1 - 0.95**60), and among 50 only 92%."""

    coverage_tolerance: float = Field(default=0.0, ge=0.0, le=1.0)
    """Share of the baseline's scored examples the candidate may leave missing or unscored;
    beyond it blocks. Within it, each such example still counts at 0 points."""

    judge_parse_failure_limit: float = Field(default=0.5, ge=0.0, le=1.0)
    """A candidate judge with a larger share of malformed verdicts than this blocks: its
    scores are mostly the parse-failure fallback, not evidence."""

    require_certified_judges: bool = False
    """Rule 10: every judge scorer of either run must be certified against its reviewers'
    labels in the store (``docs/certify.md``); an uncertified or drifting judge, or one with no
    labels, makes the comparison inconclusive."""

    judge_kappa_floor: float = Field(default=0.6, gt=-1.0, lt=1.0)
    """Rule 10: the judge-human kappa's 95% lower bound a judge must reach to be certified."""

    judge_min_labels: int = Field(default=100, ge=0)
    """Rule 10: the labelled items a judge must have to be certified."""

    judge_correction: bool = False
    """Rule 11: each judge scorer both runs graded is compared on its Rogan-Gladen corrected
    pass rates (from the review labels in the store), within ``noninferiority_margin`` at
    ``alpha`` (``docs/certify.md``)."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "policy") -> PromotionPolicy:
        """Validate a mapping (from YAML or JSON), naming ``source`` and the field on error."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            problems = field_problems(exc, top="(top level)")
            raise ConfigError(f"{source}: invalid promotion policy: {problems}") from exc

    @classmethod
    def from_file(cls, path: str | Path) -> PromotionPolicy:
        """Load a policy from a YAML or JSON file (a mapping of the fields above)."""
        file = Path(path)
        if file.suffix != ".json":
            data = load_yaml_file(file, error=ConfigError)
        else:
            try:
                data = loads_strict(file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"{file}: cannot read the promotion policy: {exc}") from exc
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{file}: a promotion policy must be a mapping of fields")
        return cls.from_mapping(data, source=str(file))

    @property
    def intervals(self) -> IntervalPolicy:
        """The policy's interval settings."""
        return IntervalPolicy(
            interval_method=self.interval_method, bootstrap_max_n=self.bootstrap_max_n
        )

    def with_intervals(
        self, interval_method: str | None = None, bootstrap_max_n: int | None = None
    ) -> PromotionPolicy:
        """This policy with the interval settings given (``None`` keeps the policy's)."""
        intervals = IntervalPolicy.of(
            self.interval_method if interval_method is None else interval_method,
            self.bootstrap_max_n if bootstrap_max_n is None else bootstrap_max_n,
        )
        return self.model_copy(update=intervals.model_dump())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        data = self.model_dump()
        data["severe_gates"] = list(self.severe_gates)
        data["severe_keywords"] = list(self.severe_keywords)
        # the judge settings appear only when set, so a policy without them reads as before
        for name, default in _JUDGE_DEFAULTS.items():
            if data[name] == default:
                del data[name]
        return data


#: The judge settings at their defaults (left out of :meth:`PromotionPolicy.to_dict`).
_JUDGE_DEFAULTS: dict[str, object] = {
    "require_certified_judges": False,
    "judge_kappa_floor": 0.6,
    "judge_min_labels": 100,
    "judge_correction": False,
}
