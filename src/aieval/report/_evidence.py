"""The evidence rules of the promotion policy: coverage of the baseline's examples, enough paired
examples, and judges whose verdicts could be read.

A rule's outcome is ``pass``, ``fail`` (blocks) or ``inconclusive`` (too little evidence to
promote, nothing shown against the candidate either).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from aieval._floors import at_most
from aieval.report._samples import ExampleNumbers

__all__ = [
    "Coverage",
    "PassCounts",
    "PassValues",
    "RuleResult",
    "comparable_rule",
    "coverage",
    "coverage_rule",
    "judge_rule",
    "paired_rule",
    "pass_rate_rule",
    "unscored_pair",
]

Outcome = Literal["pass", "fail", "inconclusive"]

_MAX_IDS = 20


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule of the policy: whether it held, why, and the numbers behind it.

    ``passed`` is ``True`` only when the rule held; ``inconclusive`` marks a rule that neither
    held nor failed because the data cannot tell (it keeps the candidate from promoting without
    blocking it).
    """

    rule: str
    passed: bool
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    inconclusive: bool = False

    @property
    def outcome(self) -> Outcome:
        """``pass``, ``fail`` or ``inconclusive``."""
        return "pass" if self.passed else "inconclusive" if self.inconclusive else "fail"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, with ``outcome``."""
        return {**asdict(self), "outcome": self.outcome}


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which of the baseline's scored examples the candidate did not score.

    Attributes:
        scored: examples the baseline has a weighted score for.
        missing: ids of those absent from the candidate run (it stopped early, or skipped them).
        unscored: ids the candidate has but did not score, wholly or partly (a scorer raised or
            returned nothing where the baseline's did not).
        candidate_scored: examples the candidate has a weighted score for.
    """

    scored: int
    missing: list[str]
    unscored: list[str]
    candidate_scored: int

    @property
    def lost(self) -> int:
        """Examples that count against the candidate."""
        return len(self.missing) + len(self.unscored)


@dataclass(frozen=True, slots=True)
class PassValues:
    """The paired examples' pass values (``ExampleNumbers.pass_value``), in pair order.

    Attributes:
        baseline: the baseline's, one per paired example (a list, or an array: the column
            paths hand theirs over without a copy).
        candidate: the candidate's, in the same order.
        lost: paired examples the baseline passed and the candidate did not.
        gained: paired examples the candidate passed and the baseline did not.
        shares: whether a side ran epochs (its examples pass in part: a t-test, not the
            paired-proportion test).
    """

    baseline: Sequence[float] | np.ndarray
    candidate: Sequence[float] | np.ndarray
    lost: int
    gained: int
    shares: bool


@dataclass(frozen=True, slots=True)
class PassCounts:
    """The paired examples' pass flags as a table (``PassValues`` without the values, for
    runs without epochs): ``n`` pairs, ``lost`` passed by the baseline only, ``gained`` by the
    candidate only, ``both`` by both."""

    n: int
    both: int
    lost: int
    gained: int


def coverage(
    baseline: Sequence[ExampleNumbers],
    candidate: Sequence[ExampleNumbers],
    baseline_only: Sequence[ExampleNumbers] = (),
) -> Coverage:
    """Count the baseline's scored examples the candidate left missing or unscored."""
    unscored = [b.id for b, c in zip(baseline, candidate, strict=True) if unscored_pair(b, c)]
    missing = [b.id for b in baseline_only if b.promotion_score is not None]
    scored = sum(b.promotion_score is not None for b in (*baseline, *baseline_only))
    cand = sum(c.promotion_score is not None for c in candidate)
    return Coverage(scored, missing, unscored, cand)


def unscored_pair(b: ExampleNumbers, c: ExampleNumbers) -> bool:
    """Whether the candidate failed to score (wholly or partly) what the baseline scored."""
    if b.promotion_score is None:
        return False
    if c.promotion_score is None:
        return True
    if c.error is not None:  # a failed target scores 0: a result, not a gap
        return False
    # a scorer the candidate lacks altogether left that example unscored just as a failed one
    return any(v is not None and c.scores.get(name) is None for name, v in b.scores.items())


def coverage_rule(cov: Coverage, tolerance: float) -> RuleResult:
    """Every example the baseline scored is scored by the candidate (up to ``tolerance``)."""
    rule = "candidate_coverage"
    details: dict[str, Any] = {
        "baseline_scored": cov.scored,
        "candidate_scored": cov.candidate_scored,
        "missing": len(cov.missing),
        "unscored": len(cov.unscored),
        "missing_ids": cov.missing[:_MAX_IDS],
        "unscored_ids": cov.unscored[:_MAX_IDS],
        "tolerance": tolerance,
    }
    if cov.scored == 0:
        side = "either run" if cov.candidate_scored == 0 else "the baseline"
        reason = f"nothing was scored in {side}: there is no evidence to compare"
        return RuleResult(rule, False, reason, details, inconclusive=True)
    share = cov.lost / cov.scored
    details["share"] = share
    if cov.lost == 0:
        return RuleResult(
            rule, True, f"the candidate scored all {cov.scored} examples the baseline scored",
            details,
        )  # fmt: skip
    parts = []
    if cov.missing:
        parts.append(f"{len(cov.missing)} missing from the candidate run ({_ids(cov.missing)})")
    if cov.unscored:
        parts.append(f"{len(cov.unscored)} not scored by the candidate ({_ids(cov.unscored)})")
    ok = at_most(share, tolerance)
    reason = (
        f"{cov.lost} of the {cov.scored} examples the baseline scored ({share:.1%}) count "
        f"against the candidate at 0 points: {'; '.join(parts)}; "
        f"{'within' if ok else 'beyond'} the coverage tolerance {tolerance:.1%}"
    )
    if not ok:
        reason += " (finish or resume the candidate run, or fix its scorers)"
    return RuleResult(rule, ok, reason, details)


def paired_rule(n: int, min_paired: int) -> RuleResult:
    """Enough examples were scored in both runs to mean something."""
    details = {"paired": n, "min_paired": min_paired}
    if n >= max(1, min_paired):
        reason = f"{n} examples scored in both runs (at least {min_paired} needed)"
        return RuleResult("paired_examples", True, reason, details)
    why = (
        f": a regression on 1 example in 20 is missing from {0.95**n:.0%} of samples of {n}"
        if n
        else ""
    )
    reason = (
        f"only {n} examples were scored in both runs; at least {max(1, min_paired)} are needed "
        f"to decide{why} (run both versions on more of the same dataset, or lower min_paired)"
    )
    return RuleResult("paired_examples", False, reason, details, inconclusive=True)


def comparable_rule(
    changed_inputs: Sequence[str] = (),
    changed_expected: Sequence[str] = (),
    scorer_changes: Sequence[str] = (),
    grading_differs: Sequence[str] = (),
) -> RuleResult:
    """The paired examples are the same examples, graded against the same answer key by the
    same scorers with the same options, the same way (``grading_differs``: ids of the paired
    examples workflow-graded in one run only)."""
    rule = "comparable_runs"
    mixed = list(grading_differs)
    details: dict[str, Any] = {
        "changed_inputs": len(changed_inputs),
        "changed_input_ids": list(changed_inputs[:_MAX_IDS]),
        "changed_expected": len(changed_expected),
        "changed_expected_ids": list(changed_expected[:_MAX_IDS]),
        "scorer_changes": list(scorer_changes),
        "grading_differs": len(mixed),
        "grading_differs_ids": mixed[:_MAX_IDS],
    }
    problems = []
    if changed_inputs:
        problems.append(
            f"{len(changed_inputs)} paired examples have a different input in the two runs "
            f"({_ids(changed_inputs)}): they are not the same examples (different datasets "
            "paired by row number?)"
        )
    if changed_expected:
        problems.append(
            f"{len(changed_expected)} paired examples have a different expected answer in the "
            f"two runs ({_ids(changed_expected)}): they were graded against different answer "
            "keys, so their scores do not compare"
        )
    for change in scorer_changes[:5]:
        name, _, what = change.partition(": ")
        problems.append(f"scorer {name} is configured differently: {what}")
    if len(scorer_changes) > 5:
        problems.append(f"… {len(scorer_changes) - 5} more scorers configured differently")
    if mixed:
        problems.append(
            f"{len(mixed)} paired examples are graded in one run and not the other "
            f"({_ids(mixed)}): their scores are on different scales; grade both runs the same way"
        )
    if not problems:
        return RuleResult(
            rule, True, "both runs graded the same inputs and answer keys the same way", details
        )
    return RuleResult(rule, False, "; ".join(problems), details, inconclusive=True)


def pass_rate_rule(values: PassValues | PassCounts, margin: float, alpha: float) -> RuleResult:
    """The pass rate is not shown to be worse than the baseline's by more than ``margin``
    percentage points (paired-proportion score test on the pass flags, or on their table; a
    paired t-test on the per-example pass shares when a side ran epochs, whose examples pass in
    part)."""
    from aieval.stats import NoninferiorityMethod, noninferiority_from_counts, noninferiority_test

    rule = "pass_rate_not_worse"
    if isinstance(values, PassCounts):
        if not values.n:
            return RuleResult(rule, True, "no paired examples: nothing to check")
        test = noninferiority_from_counts(
            values.gained, values.lost, values.n, margin=margin, alpha=alpha, scale=100.0
        )
        rate_b = (values.both + values.lost) / values.n
        rate_c = (values.both + values.gained) / values.n
    else:
        baseline, candidate = values.baseline, values.candidate
        if not len(baseline):
            return RuleResult(rule, True, "no paired examples: nothing to check")
        # elementwise, the same float operations as a loop over the pairs
        d = 100.0 * (np.asarray(candidate, dtype=float) - np.asarray(baseline, dtype=float))
        method: NoninferiorityMethod = "t" if values.shares else "proportion"
        test = noninferiority_test(d, margin=margin, alpha=alpha, method=method, scale=100.0)
        # summed one value after the other (an array's own sum adds pairwise)
        rate_b = float(sum(baseline)) / len(baseline)
        rate_c = float(sum(candidate)) / len(candidate)
    details = {
        "baseline": rate_b,
        "candidate": rate_c,
        "delta_points": test.mean_delta,
        "upper_bound": test.upper_bound,
        "margin": margin,
        "lost": values.lost,
        "gained": values.gained,
        "method": test.method,
    }
    head = (
        f"pass rate {rate_c:.1%} vs baseline {rate_b:.1%} ({test.mean_delta:+.1f} points, upper "
        f"bound {test.upper_bound:+.1f} vs margin -{margin:g})"
    )
    if test.regressed:
        return RuleResult(rule, False, f"{head}: worse than the margin, shown", details)
    return RuleResult(rule, True, f"{head}: not shown to be worse", details)


def judge_rule(
    judges: Mapping[str, tuple[int, int]],
    limit: float,
    baseline: Mapping[str, tuple[int, int]] | None = None,
) -> RuleResult:
    """No judge has more malformed verdicts than ``limit`` (a share), on either side.

    A candidate judge above the limit blocks (its scores are the parse-failure fallback); a
    baseline judge above it makes the decision inconclusive: the baseline's scores are no
    evidence to measure the candidate against, whatever the candidate scored.
    """
    rule = "judge_verdicts_readable"
    rates = _rates(judges)
    base_rates = _rates(baseline or {})
    details = {
        "limit": limit,
        "judges": _rate_details(rates),
        "baseline_judges": _rate_details(base_rates),
    }
    if not rates and not base_rates:
        return RuleResult(rule, True, "no judge verdicts were recorded", details)
    bad = [name for name, (_, _, r) in rates.items() if not at_most(r, limit)]
    bad_base = [name for name, (_, _, r) in base_rates.items() if not at_most(r, limit)]
    parts = []
    if rates:
        parts.append(f"malformed judge verdicts: {_described(rates)}")
    if base_rates:
        parts.append(f"baseline judge {_described(base_rates)}")
    reason = "; ".join(parts) + "; "
    if bad:
        reason += (f"{', '.join(bad)} above the limit {limit:.0%}: its scores are not evidence "
                   "(fix the judge's prompt, model or output format)")  # fmt: skip
    elif bad_base:
        reason += (
            f"the baseline's {', '.join(bad_base)} above the limit {limit:.0%}: its scores are "
            "not evidence to compare against (re-run the baseline with a readable judge)"
        )
    else:
        reason += f"within the limit {limit:.0%}"
    if bad:
        return RuleResult(rule, False, reason, details)
    return RuleResult(rule, not bad_base, reason, details, inconclusive=bool(bad_base))


def _rates(judges: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int, float]]:
    return {name: (f, v, f / v) for name, (f, v) in sorted(judges.items()) if v > 0}


def _rate_details(rates: Mapping[str, tuple[int, int, float]]) -> dict[str, Any]:
    return {k: {"parse_failures": f, "verdicts": v, "rate": r} for k, (f, v, r) in rates.items()}


def _described(rates: Mapping[str, tuple[int, int, float]]) -> str:
    return ", ".join(f"{k} {f}/{v} ({r:.1%})" for k, (f, v, r) in rates.items())


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:5])
    return shown + (f", … {len(ids) - 5} more" if len(ids) > 5 else "")
