"""Rule 2 of the promotion policy: the paired non-inferiority test of weighted scores."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from aieval.errors import ConfigError
from aieval.report._evidence import RuleResult
from aieval.report._policy_inputs import DecisionInputs, ScoreSums
from aieval.report._policy_model import PromotionPolicy
from aieval.stats import (
    NoninferiorityResult,
    noninferiority_from_counts,
    noninferiority_from_moments,
    noninferiority_test,
)

__all__ = ["score_rule", "score_sums_test", "score_test"]


def score_rule(inputs: DecisionInputs, policy: PromotionPolicy) -> RuleResult:
    """Rule 2: the weighted score (with ``adjusted_norm`` where recorded) is non-inferior: the
    one-sided ``1 - alpha`` lower bound of ``mean(cand - base)`` is above ``-margin``.

    Reads the inputs' ``baseline_scores``, every example the baseline scored, paired ones
    first, and ``candidate_scores``, the candidate's score of each, 0 where the candidate is
    missing or did not score it; or, when the inputs carry them, their sums (``score_sums``).
    The rule fails when the upper bound is below ``-margin`` (worse than the margin, shown)
    and is inconclusive in between.
    """
    if inputs.score_sums is not None:
        sums = inputs.score_sums
        return _rule(sums.n, lambda: score_sums_test(sums, policy), policy)
    base, cand = inputs.baseline_scores, inputs.candidate_scores
    return _rule(base.size, lambda: score_test(base, cand, policy), policy)


def _rule(n: int, run: Callable[[], NoninferiorityResult], policy: PromotionPolicy) -> RuleResult:
    rule = "weighted_score_noninferior"
    if not n:
        return RuleResult(
            rule, False, "no example has a weighted score in the baseline: nothing to test",
            inconclusive=True,
        )  # fmt: skip
    test = run()
    verdict = (
        "improved" if test.improved
        else "non-inferior" if test.non_inferior
        else "worse than the margin allows" if test.regressed
        else "inconclusive"
    )  # fmt: skip
    units = "percentage points" if test.method.startswith("paired-proportion") else "points"
    # a large p beside "worse" reads as "no evidence": say what the p-value tests
    p_label = "non-inferiority p" if test.regressed else "p"
    reason = (
        f"weighted score {test.mean_delta:+.2f} {units} on average over {test.n} examples; "
        f"one-sided {1 - policy.alpha:.0%} bounds [{test.lower_bound:+.2f}, "
        f"{test.upper_bound:+.2f}] vs margin -{policy.noninferiority_margin:g} "
        f"({p_label}={test.p_value:.3g}, {test.method}): {verdict}"
    )
    if verdict == "inconclusive":
        reason += _shortfall(test)
    elif test.regressed:
        reason += (
            f", shown: even the upper bound {test.upper_bound:+.2f} is below the margin "
            f"-{policy.noninferiority_margin:g} (a p-value near 1 means the data give no support "
            "to the candidate being within the margin)"
        )
    details = {**test.to_dict(), "verdict": verdict}
    return RuleResult(
        rule, test.non_inferior, reason, details,
        inconclusive=not test.non_inferior and not test.regressed,
    )  # fmt: skip


def _shortfall(test: NoninferiorityResult) -> str:
    text = f"; this data could show non-inferiority only at a margin above {test.min_margin:.2f}"
    observed, equal = test.examples_needed_at_observed_difference, test.examples_needed_if_equal
    plan = f"{test.planning_power:.0%} power, one-sided alpha {test.alpha:g}"
    if observed is not None:
        text += (
            f"; if the observed difference ({test.mean_delta:+.2f}) and spread (sd "
            f"{test.sd_delta:.2f}) hold, about {observed:,} paired examples in all would show "
            f"non-inferiority at margin {test.margin:g} ({plan})"
        )
    if equal is not None:
        text += f"; a candidate only as good as the baseline would need about {equal:,}"
        if observed is None:
            text += f" ({plan})"
    return text


def score_test(
    baseline: np.ndarray, candidate: np.ndarray, policy: PromotionPolicy, *, seed: int | None = None
) -> NoninferiorityResult:
    """The policy's non-inferiority test of paired 0..100 scores (method chosen by the policy:
    ``auto`` is the paired-proportion test when every score is 0 or 100, else the studentized
    bootstrap below the policy's ``bootstrap_max_n`` examples and the paired t-test from it on,
    unless its ``interval_method`` is ``bootstrap``)."""
    method = policy.method
    if method == "auto":
        binary = np.all(np.isin(baseline, (0.0, 100.0))) and np.all(
            np.isin(candidate, (0.0, 100.0))
        )
        closed = policy.intervals.closed_form(baseline.size)
        method = "proportion" if binary else "t" if closed else "bootstrap-t"
    return noninferiority_test(
        candidate - baseline, margin=policy.noninferiority_margin, alpha=policy.alpha,
        method=method, scale=100.0, n_resamples=policy.n_resamples,
        seed=policy.seed if seed is None else seed,
    )  # fmt: skip


def score_sums_test(sums: ScoreSums, policy: PromotionPolicy) -> NoninferiorityResult:
    """:func:`score_test` from the arrays' sums, where its method is a closed form: the
    paired-proportion test when every score is 0 or 100, else the paired t-test (``auto`` from
    ``bootstrap_max_n`` examples on, or ``method: t``). A method that needs the values (the
    studentized bootstrap) is a :class:`ConfigError`: the caller reads them instead."""
    method = policy.method
    if method == "auto":
        closed = policy.intervals.closed_form(sums.n)
        method = "proportion" if sums.binary else "t" if closed else "bootstrap-t"
    margin, alpha = policy.noninferiority_margin, policy.alpha
    if method == "proportion" and sums.wins is not None and sums.losses is not None:
        return noninferiority_from_counts(
            sums.wins, sums.losses, sums.n, margin=margin, alpha=alpha, scale=100.0
        )
    if method == "t":
        mean = sums.delta / sums.n
        var = max(sums.delta_squares - sums.delta * mean, 0.0) / (sums.n - 1) if sums.n > 1 else 0.0
        return noninferiority_from_moments(sums.n, mean, math.sqrt(var), margin=margin, alpha=alpha)
    raise ConfigError(f"the {method} test of weighted scores needs the scores, not their sums")
