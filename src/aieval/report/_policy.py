"""The promotion policy of spec section 10 as a pure decision over paired per-example numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aieval._json import loads_strict
from aieval.errors import ConfigError
from aieval.grading._yaml import load_yaml_file
from aieval.report._evidence import (
    RuleResult,
    comparable_rule,
    coverage,
    coverage_rule,
    judge_rule,
    paired_rule,
    pass_rate_rule,
    unscored_pair,
)
from aieval.report._samples import SEVERE_KEYWORDS, ExampleNumbers
from aieval.stats import NoninferiorityResult, noninferiority_test

__all__ = [
    "EXIT_CODES",
    "PromotionDecision",
    "PromotionPolicy",
    "RuleResult",
    "decide_promotion",
    "score_test",
]

Outcome = Literal["promote", "block", "inconclusive"]

#: ``aieval compare`` exit codes per outcome (2 is a usage error, such as an unknown run).
EXIT_CODES: dict[str, int] = {"promote": 0, "block": 1, "inconclusive": 3}

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

    noninferiority_margin: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    """Rule 2: weighted-score points (0..100) the candidate may lose and still be non-inferior;
    1.0 is the spec's near-equal band (5.2). On a 0/1 metric (every score 0 or 100) a point is
    a percentage point of the proportion: 1.0 allows a drop from 70% to 69%."""

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Rule 2: one-sided significance level of the non-inferiority test."""

    method: Literal["auto", "t", "bootstrap-t", "proportion"] = "auto"
    """Rule 2: the test. ``auto`` uses the paired-proportion score test when every score is 0 or
    100 (a 0/1 metric) and the studentized bootstrap otherwise (see ``docs/reports.md``)."""

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        data = self.model_dump()
        data["severe_gates"] = list(self.severe_gates)
        data["severe_keywords"] = list(self.severe_keywords)
        return data


@dataclass(frozen=True, slots=True)
class PromotionDecision:
    """The policy's verdict: promote, block or inconclusive.

    Attributes:
        promote: every rule passed (``outcome == "promote"``).
        summary: one line for humans.
        rules: every rule's result, in policy order.
        warnings: things to look at that do not decide (unpaired examples, ...).
        policy: the policy applied.
        outcome: ``promote`` (every rule held), ``block`` (a rule failed: a regression shown or
            a hard rule broken) or ``inconclusive`` (nothing failed, but the data cannot show
            the candidate is not worse: too few examples, or a margin too tight for them).
    """

    promote: bool
    summary: str
    rules: list[RuleResult]
    warnings: list[str]
    policy: PromotionPolicy
    outcome: Outcome = "promote"

    @property
    def exit_code(self) -> int:
        """``aieval compare``'s exit code: 0 promote, 1 block, 3 inconclusive."""
        return EXIT_CODES[self.outcome]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the ``decision`` block of a comparison)."""
        return {
            "outcome": self.outcome,
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
    baseline_only: Sequence[ExampleNumbers] = (),
    judges: Mapping[str, tuple[int, int]] | None = None,
    changed_inputs: Sequence[str] = (),
) -> PromotionDecision:
    """Apply the promotion policy to paired examples (``baseline[i]`` and ``candidate[i]`` are
    the same example).

    Args:
        baseline: the baseline's numbers per paired example.
        candidate: the candidate's numbers, in the same order.
        policy: the policy; defaults to :class:`PromotionPolicy` ().
        unpaired: examples present in only one run (a warning).
        warnings: further warnings to carry into the decision.
        baseline_only: the baseline's examples the candidate run lacks; each one it scored
            counts against the candidate (coverage rule, and 0 points in the score test).
        judges: ``{judge: (malformed verdicts, verdicts)}`` of the candidate's judges.
        changed_inputs: ids of paired examples whose input differs between the runs (they are
            not the same examples: the comparison is inconclusive).

    Example:
        >>> b = [ExampleNumbers(id=str(i), passed=True, weighted_score=80.0 + i % 3)
        ...      for i in range(60)]
        >>> c = [ExampleNumbers(id=str(i), passed=True, weighted_score=81.0 + i % 2)
        ...      for i in range(60)]
        >>> decide_promotion(b, c).outcome
        'promote'
        >>> decide_promotion(b[:5], c[:5]).outcome
        'inconclusive'
    """
    if len(baseline) != len(candidate):
        raise ConfigError(
            f"decide_promotion: {len(baseline)} baseline and {len(candidate)} candidate examples;"
            " pass the paired examples only, in the same order"
        )
    policy = policy or PromotionPolicy()
    cov = coverage(baseline, candidate, baseline_only)
    both = sum(
        b.promotion_score is not None and not unscored_pair(b, c)
        for b, c in zip(baseline, candidate, strict=True)
    )
    rules = [
        coverage_rule(cov, policy.coverage_tolerance),
        comparable_rule(baseline, candidate, changed_inputs),
        paired_rule(both, policy.min_paired),
        gate_rule(baseline, candidate, policy),
        score_rule(baseline, candidate, policy, baseline_only=baseline_only),
        pass_rate_rule(baseline, candidate, policy.noninferiority_margin, policy.alpha),
        floor_rule(baseline, candidate, policy),
        severe_rule(baseline, candidate, policy),
        judge_rule(judges or {}, policy.judge_parse_failure_limit),
    ]
    notes = list(warnings)
    if unpaired:
        notes.append(f"{unpaired} examples are in only one run; see the coverage rule")
    return PromotionDecision(*_verdict(rules), rules, notes, policy, _outcome(rules))


def _outcome(rules: Sequence[RuleResult]) -> Outcome:
    if any(r.outcome == "fail" for r in rules):
        return "block"
    return "inconclusive" if any(r.inconclusive for r in rules) else "promote"


def _verdict(rules: Sequence[RuleResult]) -> tuple[bool, str]:
    outcome = _outcome(rules)
    if outcome == "promote":
        return True, "promote: every rule of the policy holds"
    kind = "fail" if outcome == "block" else "inconclusive"
    held = [r for r in rules if r.outcome == kind]
    head = (
        f"blocked by {', '.join(r.rule for r in held)}"
        if outcome == "block"
        else f"inconclusive ({', '.join(r.rule for r in held)}): not enough evidence to promote"
    )
    return False, head + ": " + "; ".join(r.reason for r in held)


def gate_rule(
    baseline: Sequence[ExampleNumbers], candidate: Sequence[ExampleNumbers], policy: PromotionPolicy
) -> RuleResult:
    """Rule 1: the hard-gate failure rate (any gate, and each gate) does not rise beyond the
    tolerance."""
    pairs = [(b, c) for b, c in zip(baseline, candidate, strict=True) if b.gates and c.gates]
    rule = "hard_gate_failure_rate"
    ungated = [c.id for b, c in zip(baseline, candidate, strict=True) if b.gates and not c.gates]
    if ungated:
        # Gates that vanish (the candidate lost its workflow grading) must not read as passed.
        return RuleResult(
            rule, False,
            f"the candidate recorded no hard gates on {len(ungated)} examples the baseline "
            f"gated ({', '.join(ungated[:5])}): grade the candidate run the same way",
            {"ungated": len(ungated), "ungated_ids": ungated[:20]},
        )  # fmt: skip
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
    baseline: Sequence[ExampleNumbers],
    candidate: Sequence[ExampleNumbers],
    policy: PromotionPolicy,
    *,
    baseline_only: Sequence[ExampleNumbers] = (),
) -> RuleResult:
    """Rule 2: the weighted score (with ``adjusted_norm`` where recorded) is non-inferior: the
    one-sided ``1 - alpha`` lower bound of ``mean(candidate - baseline)`` is above ``-margin``.

    Every example the baseline scored takes part; where the candidate is missing or did not
    score it, the candidate counts 0 points. The rule fails when the upper bound is below
    ``-margin`` (worse than the margin, shown) and is inconclusive in between.
    """
    rule = "weighted_score_noninferior"
    pairs = [
        (b.promotion_score, 0.0 if c is None or unscored_pair(b, c) else c.promotion_score)
        for b, c in [*zip(baseline, candidate, strict=True), *((b, None) for b in baseline_only)]
        if b.promotion_score is not None
    ]
    if not pairs:
        return RuleResult(
            rule, False, "no example has a weighted score in the baseline: nothing to test",
            inconclusive=True,
        )  # fmt: skip
    base = np.array([p[0] for p in pairs], dtype=float)
    cand = np.array([p[1] for p in pairs], dtype=float)
    test = score_test(base, cand, policy)
    verdict = (
        "improved" if test.improved
        else "non-inferior" if test.non_inferior
        else "worse than the margin allows" if test.regressed
        else "inconclusive"
    )  # fmt: skip
    units = "percentage points" if test.method.startswith("paired-proportion") else "points"
    reason = (
        f"weighted score {test.mean_delta:+.2f} {units} on average over {test.n} examples; "
        f"one-sided {1 - policy.alpha:.0%} bounds [{test.lower_bound:+.2f}, "
        f"{test.upper_bound:+.2f}] vs margin -{policy.noninferiority_margin:g} "
        f"(p={test.p_value:.3g}, {test.method}): {verdict}"
    )
    if verdict == "inconclusive":
        reason += _shortfall(test)
    details = {**test.to_dict(), "verdict": verdict}
    return RuleResult(
        rule, test.non_inferior, reason, details,
        inconclusive=not test.non_inferior and not test.regressed,
    )  # fmt: skip


def _shortfall(test: NoninferiorityResult) -> str:
    text = f"; this data could show non-inferiority only at a margin above {test.min_margin:.2f}"
    if test.n_needed is None:
        return text
    return text + (
        f"; about {test.n_needed:,} paired examples would show it at {test.margin:g} for a "
        "candidate as good as the baseline with this spread (80% power)"
    )


def score_test(
    baseline: np.ndarray, candidate: np.ndarray, policy: PromotionPolicy, *, seed: int | None = None
) -> NoninferiorityResult:
    """The policy's non-inferiority test of paired 0..100 scores (method chosen by the policy:
    ``auto`` is the paired-proportion test when every score is 0 or 100, else the studentized
    bootstrap)."""
    method = policy.method
    if method == "auto":
        binary = np.all(np.isin(baseline, (0.0, 100.0))) and np.all(
            np.isin(candidate, (0.0, 100.0))
        )
        method = "proportion" if binary else "bootstrap-t"
    return noninferiority_test(
        candidate - baseline, margin=policy.noninferiority_margin, alpha=policy.alpha,
        method=method, scale=100.0, n_resamples=policy.n_resamples,
        seed=policy.seed if seed is None else seed,
    )  # fmt: skip


def _floored(ex: ExampleNumbers, name: str) -> bool:
    """Whether ``ex`` recorded criterion ``name`` with a floor it either met or missed."""
    criterion = ex.criteria.get(name)
    return criterion is not None and criterion.floor_passed is not None


def floor_rule(
    baseline: Sequence[ExampleNumbers], candidate: Sequence[ExampleNumbers], policy: PromotionPolicy
) -> RuleResult:
    """Rule 3: no critical criterion (one with a floor) misses its floor on more paired examples
    than in the baseline (plus the tolerance). A paired example where the baseline checked the
    floor and the candidate did not record it (the criterion is gone or unscored) counts as a
    violation: an unchecked floor is not a held one."""
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
        # a floor the baseline checked and the candidate did not record is not a pass
        unchecked = sum(
            _floored(b, name) and not _floored(c, name)
            for b, c in zip(baseline, candidate, strict=True)
        )
        vc = sum(name in c.floor_violations() for c in candidate) + unchecked
        counts[name] = {"baseline": vb, "candidate": vc, "unchecked": unchecked}
    tol = policy.floor_regression_tolerance
    worse = [n for n, v in counts.items() if v["candidate"] > v["baseline"] + tol]
    described = ", ".join(
        f"{n} {counts[n]['candidate']} vs {counts[n]['baseline']}"
        + (f" ({counts[n]['unchecked']} not recorded)" if counts[n]["unchecked"] else "")
        for n in (worse or critical)
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
