"""Where a comparison decides promote: the promotion policy of spec section 10 as one decision.

:data:`RULES` lists the policy's nine rules once, in order; :func:`decide` applies them to the
:class:`DecisionInputs` either comparison path builds (sample by sample in ``_compare``, from
columns in ``_compare_columns``) and returns the :class:`PromotionDecision`. The settings are in
``_policy_model``, each rule's test in ``_evidence``, ``_policy_rules`` and ``_policy_stats``.
The judge rules a policy may ask for (``_policy_judges``, ``_policy_correction``) read labels
from the store, not these inputs: ``compare_runs`` adds them with :func:`with_rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from aieval.errors import ConfigError
from aieval.report._evidence import (
    RuleResult,
    comparable_rule,
    coverage_rule,
    judge_rule,
    paired_rule,
    pass_rate_rule,
)
from aieval.report._policy_inputs import DecisionInputs, example_inputs
from aieval.report._policy_model import PromotionPolicy
from aieval.report._policy_rules import floor_rule, gate_rule, severe_rule
from aieval.report._policy_stats import score_rule, score_test
from aieval.report._samples import ExampleNumbers

__all__ = [
    "EXIT_CODES",
    "RULES",
    "DecisionInputs",
    "PromotionDecision",
    "PromotionPolicy",
    "RuleResult",
    "decide",
    "decide_promotion",
    "example_inputs",
    "score_test",
    "with_rules",
]

Outcome = Literal["promote", "block", "inconclusive"]

#: ``aieval compare`` exit codes per outcome (2 is a usage error, such as an unknown run).
EXIT_CODES: dict[str, int] = {"promote": 0, "block": 1, "inconclusive": 3}


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
    baseline_judges: Mapping[str, tuple[int, int]] | None = None,
    changed_expected: Sequence[str] = (),
    scorer_changes: Sequence[str] = (),
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
        judges: ``{judge: (malformed verdicts, verdicts)}`` of the candidate's judges (above
            the policy's limit: block).
        baseline_judges: the same for the baseline's judges (above the limit: inconclusive,
            the baseline's scores are no evidence).
        changed_expected: ids of paired examples whose expected answer differs between the
            runs (graded against another answer key: inconclusive).
        scorer_changes: one line per scorer both runs have whose stored options differ
            (``name: option X in the baseline, Y in the candidate``; inconclusive).
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

    Raises:
        ConfigError: the lists differ in length, or the policy has a judge setting (its rules
            need a store: :func:`compare_runs`).
    """
    if len(baseline) != len(candidate):
        raise ConfigError(
            f"decide_promotion: {len(baseline)} baseline and {len(candidate)} candidate examples;"
            " pass the paired examples only, in the same order"
        )
    policy = policy or PromotionPolicy()
    if policy.require_certified_judges or policy.judge_correction:
        # their rules read labels and runs from a store; leaving them out would promote
        # without the check the policy asks for
        raise ConfigError(
            "decide_promotion: require_certified_judges and judge_correction read the judges' "
            "review labels from a store; compare stored runs with compare_runs instead"
        )
    inputs = example_inputs(
        baseline, candidate, unpaired=unpaired, warnings=warnings, baseline_only=baseline_only,
        judges=judges, changed_inputs=changed_inputs, baseline_judges=baseline_judges,
        changed_expected=changed_expected, scorer_changes=scorer_changes,
    )  # fmt: skip
    return decide(inputs, policy)


Rule = Callable[[DecisionInputs, PromotionPolicy], RuleResult]

#: The promotion policy's rules, in the order every decision lists them (spec 10). Each reads
#: its part of the inputs; a failed rule blocks, an inconclusive one holds the candidate back.
RULES: tuple[Rule, ...] = (
    lambda i, p: coverage_rule(i.coverage, p.coverage_tolerance),
    lambda i, p: comparable_rule(
        i.changed_inputs, i.changed_expected, i.scorer_changes, i.grading_differs
    ),
    lambda i, p: paired_rule(i.scored_paired, p.min_paired),
    lambda i, p: gate_rule(*_sides(i), p),
    lambda i, p: score_rule(i, p),
    lambda i, p: pass_rate_rule(i.pass_values, p.noninferiority_margin, p.alpha),
    lambda i, p: floor_rule(*_sides(i), p),
    lambda i, p: severe_rule(*_sides(i), p),
    lambda i, p: judge_rule(i.judges, p.judge_parse_failure_limit, i.baseline_judges),
)


def decide(inputs: DecisionInputs, policy: PromotionPolicy) -> PromotionDecision:
    """The decision of ``policy`` on one comparison: every rule of :data:`RULES` applied to
    ``inputs``, with their warnings and a note of the unpaired examples."""
    rules = [rule(inputs, policy) for rule in RULES]
    notes = list(inputs.warnings)
    if inputs.unpaired:
        notes.append(f"{inputs.unpaired} examples are in only one run; see the coverage rule")
    return PromotionDecision(*_verdict(rules), rules, notes, policy, _outcome(rules))


def with_rules(decision: PromotionDecision, *added: RuleResult | None) -> PromotionDecision:
    """``decision`` with more rules read outside the comparison's inputs (the judges' rules),
    its outcome and summary decided again; a ``None`` rule is left out."""
    more = [rule for rule in added if rule is not None]
    if not more:
        return decision
    rules = [*decision.rules, *more]
    return PromotionDecision(
        *_verdict(rules), rules, decision.warnings, decision.policy, _outcome(rules)
    )


def _sides(inputs: DecisionInputs) -> tuple[list[ExampleNumbers], list[ExampleNumbers]]:
    """The baseline's and the candidate's graded examples, in pair order."""
    return [b for b, _ in inputs.graded_pairs], [c for _, c in inputs.graded_pairs]


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
