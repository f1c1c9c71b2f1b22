"""Rules 1, 3 and 4 of the promotion policy: hard gates, critical floors, severe failures."""

from __future__ import annotations

from collections.abc import Sequence

from aieval._floors import at_most
from aieval.report._evidence import RuleResult
from aieval.report._policy_model import PromotionPolicy
from aieval.report._samples import ExampleNumbers

__all__ = ["floor_rule", "gate_rule", "severe_rule"]


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
    # rates are compared up to float rounding: 0.07 - 0.05 does not exceed 0.02
    worse = [g for g, (rb, rc) in per_gate.items() if not at_most(rc - rb, tol)]
    within = at_most(rate_c - rate_b, tol)
    ok = within and not worse
    reason = (
        f"gate failure rate {rate_c:.1%} vs baseline {rate_b:.1%} "
        f"({(rate_c - rate_b) * 100:+.1f} points {'<=' if within else '>'}"
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
