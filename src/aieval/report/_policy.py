"""The promotion policy of spec section 10 as a pure decision over paired per-example numbers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aieval.errors import ConfigError
from aieval.report._samples import SEVERE_KEYWORDS, ExampleNumbers
from aieval.stats import noninferiority_test

__all__ = ["PromotionDecision", "PromotionPolicy", "RuleResult", "decide_promotion"]

#: Gates whose failure is severe whatever their name (validation and tool-safety contracts).
SEVERE_GATES: tuple[str, ...] = (
    "schema_contract_valid",
    "tool_call_schema_valid",
    "no_forbidden_tool_invoked",
)

# Rates are compared after rounding away float noise, so 0.3 - 0.1 does not exceed 0.2.
_EPS = 1e-9


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

    noninferiority_margin: float = Field(default=1.0, ge=0.0)
    """Rule 2: weighted-score points (0..100) the candidate may lose and still be non-inferior;
    1.0 is the spec's near-equal band (5.2)."""

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Rule 2: one-sided significance level of the non-inferiority test."""

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

    min_paired: int = Field(default=1, ge=0)
    """Fewer examples present in both runs than this blocks promotion."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "policy") -> PromotionPolicy:
        """Validate a mapping (from YAML or JSON), naming ``source`` and the field on error."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ConfigError(f"{source}: invalid promotion policy: {problems}") from exc

    @classmethod
    def from_file(cls, path: str | Path) -> PromotionPolicy:
        """Load a policy from a YAML or JSON file (a mapping of the fields above)."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
            data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigError(f"{file}: cannot read the promotion policy: {exc}") from exc
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{file}: a promotion policy must be a mapping of fields")
        return cls.from_mapping(data, source=str(file))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        data = self.model_dump()
        data["severe_gates"] = list(self.severe_gates)
        data["severe_keywords"] = list(self.severe_keywords)
        return data


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule of the policy: whether it held, why, and the numbers behind it."""

    rule: str
    passed: bool
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PromotionDecision:
    """Whether the candidate promotes: every rule passed.

    Attributes:
        promote: all rules passed.
        summary: one line for humans.
        rules: every rule's result, in policy order.
        warnings: things to look at that do not block (unpaired examples, ...).
        policy: the policy applied.
    """

    promote: bool
    summary: str
    rules: list[RuleResult]
    warnings: list[str]
    policy: PromotionPolicy

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the ``decision`` block of a comparison)."""
        return {
            "promote": self.promote,
            "summary": self.summary,
            "rules": [r.to_dict() for r in self.rules],
            "warnings": list(self.warnings),
            "policy": self.policy.to_dict(),
        }


def decide_promotion(
    baseline: Sequence[ExampleNumbers],
    candidate: Sequence[ExampleNumbers],
    policy: PromotionPolicy | None = None,
    *,
    unpaired: int = 0,
    warnings: Sequence[str] = (),
) -> PromotionDecision:
    """Apply the promotion policy to paired examples (``baseline[i]`` and ``candidate[i]`` are
    the same example).

    Args:
        baseline: the baseline's numbers per paired example.
        candidate: the candidate's numbers, in the same order.
        policy: the policy; defaults to :class:`PromotionPolicy` ().
        unpaired: examples present in only one run (a warning, not a block).
        warnings: further warnings to carry into the decision.

    Example:
        >>> b = [ExampleNumbers(id=str(i), passed=True, weighted_score=80.0 + i % 3)
        ...      for i in range(30)]
        >>> c = [ExampleNumbers(id=str(i), passed=True, weighted_score=81.0 + i % 2)
        ...      for i in range(30)]
        >>> decide_promotion(b, c).promote
        True
    """
    if len(baseline) != len(candidate):
        raise ConfigError(
            f"decide_promotion: {len(baseline)} baseline and {len(candidate)} candidate examples;"
            " pass the paired examples only, in the same order"
        )
    policy = policy or PromotionPolicy()
    rules = [
        _paired_rule(len(baseline), policy),
        gate_rule(baseline, candidate, policy),
        score_rule(baseline, candidate, policy),
        floor_rule(baseline, candidate, policy),
        severe_rule(baseline, candidate, policy),
    ]
    notes = list(warnings)
    if unpaired:
        notes.append(f"{unpaired} examples are in only one run and were left out of the decision")
    promote = all(r.passed for r in rules)
    failed = [r.rule for r in rules if not r.passed]
    summary = (
        "promote: every rule of the policy holds"
        if promote
        else f"blocked by {', '.join(failed)}: "
        + "; ".join(r.reason for r in rules if not r.passed)
    )
    return PromotionDecision(promote, summary, rules, notes, policy)


def _paired_rule(n: int, policy: PromotionPolicy) -> RuleResult:
    ok = n >= policy.min_paired and n > 0
    reason = (
        f"{n} examples are in both runs (at least {policy.min_paired} needed)"
        if ok
        else f"only {n} examples are in both runs; at least {max(1, policy.min_paired)} are"
        " needed to compare (run both versions on the same dataset)"
    )
    return RuleResult("paired_examples", ok, reason, {"paired": n, "min_paired": policy.min_paired})


def gate_rule(
    baseline: Sequence[ExampleNumbers], candidate: Sequence[ExampleNumbers], policy: PromotionPolicy
) -> RuleResult:
    """Rule 1: the hard-gate failure rate (any gate, and each gate) does not rise beyond the
    tolerance."""
    pairs = [(b, c) for b, c in zip(baseline, candidate, strict=True) if b.gates and c.gates]
    rule = "hard_gate_failure_rate"
    if not pairs:
        return RuleResult(
            rule, True, "no hard gates were recorded (ungraded runs): nothing to check"
        )
    tol = policy.gate_failure_tolerance
    rate_b = sum(b.gate_failed for b, _ in pairs) / len(pairs)
    rate_c = sum(c.gate_failed for _, c in pairs) / len(pairs)
    per_gate = _per_gate_rates(pairs)
    worse = [g for g, (rb, rc) in per_gate.items() if rc - rb > tol + _EPS]
    ok = rate_c - rate_b <= tol + _EPS and not worse
    reason = (
        f"gate failure rate {rate_c:.1%} vs baseline {rate_b:.1%} "
        f"({(rate_c - rate_b) * 100:+.1f} points {'<=' if rate_c - rate_b <= tol + _EPS else '>'}"
        f" tolerance {tol * 100:.1f})"
    )
    if worse:
        reason += "; worse on " + ", ".join(
            f"{g} ({per_gate[g][1]:.1%} vs {per_gate[g][0]:.1%})" for g in worse
        )
    details = {
        "n": len(pairs),
        "baseline_rate": rate_b,
        "candidate_rate": rate_c,
        "tolerance": tol,
        "gates": {g: {"baseline": rb, "candidate": rc} for g, (rb, rc) in per_gate.items()},
        "worse_gates": worse,
    }
    return RuleResult(rule, ok, reason, details)


def _per_gate_rates(
    pairs: list[tuple[ExampleNumbers, ExampleNumbers]],
) -> dict[str, tuple[float, float]]:
    names = sorted({g for b, c in pairs for g in (*b.gates, *c.gates)})
    out = {}
    for name in names:
        both = [(b, c) for b, c in pairs if name in b.gates and name in c.gates]
        if both:
            fb = sum(not b.gates[name] for b, _ in both) / len(both)
            fc = sum(not c.gates[name] for _, c in both) / len(both)
            out[name] = (fb, fc)
    return out


def score_rule(
    baseline: Sequence[ExampleNumbers], candidate: Sequence[ExampleNumbers], policy: PromotionPolicy
) -> RuleResult:
    """Rule 2: the weighted score (with ``adjusted_norm`` where recorded) is non-inferior: a
    one-sided paired t-test rejects ``mean(candidate - baseline) <= -margin`` at ``alpha``."""
    rule = "weighted_score_noninferior"
    diffs = []
    for b, c in zip(baseline, candidate, strict=True):
        sb, sc = b.promotion_score, c.promotion_score
        if sb is not None and sc is not None:
            diffs.append(sc - sb)
    if not diffs:
        return RuleResult(
            rule, True, "no example has a weighted score in both runs: nothing to check"
        )
    test = noninferiority_test(diffs, margin=policy.noninferiority_margin, alpha=policy.alpha)
    level = f"{1 - policy.alpha:.0%}"
    verdict = (
        "improved"
        if test.non_inferior and test.improved
        else "non-inferior"
        if test.non_inferior
        else "possibly worse than the margin allows"
    )
    reason = (
        f"weighted score {test.mean_delta:+.2f} points on average over {test.n} examples; "
        f"one-sided {level} lower bound {test.lower_bound:+.2f} vs margin "
        f"-{policy.noninferiority_margin:g} (p={test.p_value:.3g}, {test.method}): {verdict}"
    )
    details = {**test.to_dict(), "verdict": verdict}
    return RuleResult(rule, test.non_inferior, reason, details)


def floor_rule(
    baseline: Sequence[ExampleNumbers], candidate: Sequence[ExampleNumbers], policy: PromotionPolicy
) -> RuleResult:
    """Rule 3: no critical criterion (one with a floor) misses its floor on more paired examples
    than in the baseline (plus the tolerance)."""
    rule = "critical_floor_regression"
    critical = sorted(
        {
            name
            for ex in (*baseline, *candidate)
            for name, c in ex.criteria.items()
            if c.floor is not None
        }
    )
    if not critical:
        return RuleResult(rule, True, "no criterion has a critical floor: nothing to check")
    counts = {}
    for name in critical:
        vb = sum(name in b.floor_violations() for b in baseline)
        vc = sum(name in c.floor_violations() for c in candidate)
        counts[name] = {"baseline": vb, "candidate": vc}
    tol = policy.floor_regression_tolerance
    worse = [n for n, v in counts.items() if v["candidate"] > v["baseline"] + tol]
    described = ", ".join(
        f"{n} {counts[n]['candidate']} vs {counts[n]['baseline']}" for n in (worse or critical)
    )
    reason = (
        f"more floor violations than the baseline (+ tolerance {tol}): {described}"
        if worse
        else f"no critical floor regressed (violations candidate vs baseline: {described})"
    )
    return RuleResult(
        rule, not worse, reason, {"criteria": counts, "tolerance": tol, "worse": worse}
    )


def severe_rule(
    baseline: Sequence[ExampleNumbers], candidate: Sequence[ExampleNumbers], policy: PromotionPolicy
) -> RuleResult:
    """Rule 4: examples with a severe validation/security failure do not increase."""
    rule = "severe_failures"
    gates, keywords = tuple(policy.severe_gates), tuple(k.lower() for k in policy.severe_keywords)
    checked = any(
        name in gates or any(k in name.lower() for k in keywords)
        for ex in (*baseline, *candidate)
        for name in (*ex.gates, *(n for n, c in ex.criteria.items() if c.floor is not None))
    )
    if not checked:
        return RuleResult(rule, True, "no severe gate or safety/validation floor was recorded")
    hits_b = [b.id for b in baseline if b.severe(gates, keywords)]
    hits_c = [c.id for c in candidate if c.severe(gates, keywords)]
    kinds: dict[str, int] = {}
    for c in candidate:
        for what in c.severe(gates, keywords):
            kinds[what] = kinds.get(what, 0) + 1
    tol = policy.severe_tolerance
    ok = len(hits_c) <= len(hits_b) + tol
    reason = (
        f"{len(hits_c)} examples with a severe failure vs {len(hits_b)} in the baseline"
        f" ({'within' if ok else 'beyond'} tolerance {tol})"
    )
    if kinds:
        reason += "; candidate: " + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items()))
    details = {
        "baseline": len(hits_b),
        "candidate": len(hits_c),
        "tolerance": tol,
        "candidate_failures": kinds,
        "candidate_ids": hits_c[:20],
    }
    return RuleResult(rule, ok, reason, details)
