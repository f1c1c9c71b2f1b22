"""The rows of a comparison both of its paths build alike: a metric's row, an example's side
and changes, the tie-break, and a weighted score without some scorers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aieval.errors import ConfigError
from aieval.grading import RunStanding, tie_break
from aieval.report._intervals import rate_successes
from aieval.report._policy import PromotionDecision, PromotionPolicy
from aieval.report._policy_stats import score_test
from aieval.report._samples import ExampleNumbers, ungraded_score
from aieval.stats import noninferiority_test, paired_bootstrap_cis, paired_t_interval

__all__ = [
    "BOOTSTRAP_METHOD",
    "PAIRED_T_METHOD",
    "ComparedParts",
    "MetricValues",
    "RowInterval",
    "added_warning",
    "describe_changes",
    "metric_rows",
    "side_row",
    "tie_break_row",
    "uneven_warning",
    "without_scorers",
]


@dataclass(frozen=True, slots=True)
class ComparedParts:
    """What a comparison path found: the paired count, the unpaired example ids (all), the
    metric rows, the regressions and improvements listed (and how many there are in all), the
    tie-break and the promotion decision."""

    paired: int
    only_baseline: list[str]
    only_candidate: list[str]
    metrics: list[dict[str, Any]]
    regressions: list[dict[str, Any]]
    improvements: list[dict[str, Any]]
    regressions_count: int
    improvements_count: int
    tie_break: dict[str, Any]
    decision: PromotionDecision


def added_warning(added: set[str]) -> str:
    """The warning of scorers the candidate adds (left out of its weighted score)."""
    return (
        f"the candidate adds scorers the baseline lacks ({', '.join(sorted(added))}): left "
        "out of its weighted score so both sides average the same scorers"
    )


def uneven_warning(uneven: int) -> str:
    """The warning of paired examples whose rows' own checks differ between the sides."""
    return (
        f"{uneven} paired example(s) carry a row's own check on one side only: left out "
        "of that side's weighted score so both sides average the same checks"
    )


def without_scorers(ex: ExampleNumbers, names: set[str]) -> ExampleNumbers:
    """``ex`` with its ungraded weighted score recomputed without the scorers ``names``."""
    if ex.graded or not names & set(ex.scores):
        return ex
    kept = {k: v for k, v in ex.scores.items() if k not in names}
    return replace(ex, weighted_score=ungraded_score(ex.error, kept, ex.weights))


#: A metric of the comparison: its name, both sides' values over the examples both have
#: (``None``: no such example), and the counts of examples one side lacks.
MetricValues = tuple[str, np.ndarray | None, np.ndarray | None, dict[str, int]]

#: The method of a metric row's interval when it is not a decision's: a percentile bootstrap
#: of the paired differences.
BOOTSTRAP_METHOD = "paired percentile bootstrap"

#: The same from ``bootstrap_max_n`` paired examples on: Student's t on the differences.
PAIRED_T_METHOD = "paired t interval"


@dataclass(frozen=True, slots=True)
class RowInterval:
    """A metric row's interval: its bounds, the method that drew them, its confidence and
    whether it is a pair of one-sided bounds (the decision's) or a two-sided interval."""

    low: float
    high: float
    method: str
    confidence: float
    one_sided: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "method": self.method,
            "confidence": self.confidence,
            "one_sided": self.one_sided,
        }


def metric_rows(
    metrics: Sequence[MetricValues],
    confidence: float,
    n_resamples: int,
    seed: int | None,
    *,
    policy: PromotionPolicy,
    pass_shares: bool,
) -> list[dict[str, Any]]:
    """The comparison's metric rows.

    The rows of the decision's metrics (``weighted_score``, ``pass_rate``) carry the
    decision's own one-sided ``1 - alpha`` bounds, drawn by the rule's method on the row's
    values, so the table and the rule never show two intervals of one delta; every other
    interval is the paired percentile bootstrap of its metric alone (metrics over the same
    number of examples draw their resamples from one stream,
    :func:`~aieval.stats.paired_bootstrap_cis`, which gives the same numbers faster), or, from
    the policy's ``bootstrap_max_n`` paired examples on (``interval_method: auto``), a closed
    form (:func:`_closed_interval`). Each row names its ``method``, ``confidence`` and whether
    it is ``one_sided``.
    """
    decided: dict[int, RowInterval] = {}
    for j, (name, vb, vc, _) in enumerate(metrics):
        if vb is not None and vc is not None:
            found = _decision_interval(name, vb, vc, policy, pass_shares)
            if found is None and policy.intervals.closed_form(vb.size):
                found = _closed_interval(vb, vc, confidence)
            if found is not None:
                decided[j] = found
    scored = [
        (vb, vc)
        for j, (_, vb, vc, _) in enumerate(metrics)
        if vb is not None and vc is not None and j not in decided
    ]
    cis = iter(
        paired_bootstrap_cis(scored, confidence=confidence, n_resamples=n_resamples, seed=seed)
        if scored
        else []
    )
    rows: list[dict[str, Any]] = []
    for j, (name, vb, vc, missing) in enumerate(metrics):
        if vb is None or vc is None:
            rows.append(
                {
                    "name": name,
                    "baseline": None,
                    "candidate": None,
                    "delta": None,
                    "low": None,
                    "high": None,
                    "method": None,
                    "n": 0,
                    **missing,
                }
            )
            continue
        if j in decided:
            interval = decided[j]
            delta = float(np.mean(vc) - np.mean(vb))  # as paired_bootstrap_cis estimates it
        else:
            ci = next(cis)
            interval = RowInterval(ci.low, ci.high, BOOTSTRAP_METHOD, confidence, False)
            delta = ci.estimate
        rows.append(
            {
                "name": name,
                "baseline": float(vb.mean()),
                "candidate": float(vc.mean()),
                "delta": delta,
                **interval.to_dict(),
                "n": len(vb),
                **missing,
            }
        )
    return rows


def _closed_interval(vb: np.ndarray, vc: np.ndarray, confidence: float) -> RowInterval:
    """The two-sided closed-form interval of a metric's paired delta: Tango's paired-proportion
    score interval when both sides are 0/1 (exact in its tails where few pairs differ, which
    the t interval is not), else the paired t interval."""
    if rate_successes(vb) is not None and rate_successes(vc) is not None:
        tail = (1.0 - confidence) / 2.0
        # the one-sided 1 - tail bounds are the two-sided interval at ``confidence``
        test = noninferiority_test(vc - vb, margin=0.0, alpha=tail, method="proportion")
        return RowInterval(test.lower_bound, test.upper_bound, test.method, confidence, False)
    ci = paired_t_interval(vb, vc, confidence=confidence)
    return RowInterval(ci.low, ci.high, PAIRED_T_METHOD, confidence, False)


def _decision_interval(
    name: str, vb: np.ndarray, vc: np.ndarray, policy: PromotionPolicy, pass_shares: bool
) -> RowInterval | None:
    """The one-sided bounds of a decision's metric by its rule's method (``None``: not a
    decision's metric, or values the rule's method cannot take, whose row keeps the
    bootstrap)."""
    confidence = 1.0 - policy.alpha
    try:
        if name == "weighted_score":
            test = score_test(vb, vc, policy)
            return RowInterval(test.lower_bound, test.upper_bound, test.method, confidence, True)
        if name == "pass_rate":
            # as pass_rate_rule_of tests it: in points, a t-test when a side ran epochs
            test = noninferiority_test(
                100.0 * (vc - vb), margin=policy.noninferiority_margin, alpha=policy.alpha,
                method="t" if pass_shares else "proportion", scale=100.0,
            )  # fmt: skip
            low, high = test.lower_bound / 100.0, test.upper_bound / 100.0
            return RowInterval(low, high, test.method, confidence, True)
    except ConfigError:
        return None
    return None


def side_row(ex: ExampleNumbers) -> dict[str, Any]:
    """An example's side of a regression or improvement row."""
    side = {"passed": ex.passed, "grade": ex.grade, "weighted_score": ex.weighted_score}
    if ex.pass_share is not None:
        side["pass_share"] = ex.pass_share
    return side


def describe_changes(b: ExampleNumbers, c: ExampleNumbers) -> list[str]:
    """Human-readable differences between the baseline and candidate of one example."""
    out = []
    if b.passed != c.passed:
        out.append("now passes" if c.passed else "no longer passes")
    if b.grade != c.grade and b.grade is not None and c.grade is not None:
        out.append(f"grade {b.grade} -> {c.grade}")
    if b.weighted_score is not None and c.weighted_score is not None:
        d = c.weighted_score - b.weighted_score
        if d:
            out.append(
                f"weighted score {b.weighted_score:.1f} -> {c.weighted_score:.1f} ({d:+.1f})"
            )
    for gate in sorted(set(b.gates) | set(c.gates)):
        was, now = b.gates.get(gate), c.gates.get(gate)
        if was is not None and now is not None and was != now:
            out.append(f"gate {gate} {'now passes' if now else 'now fails'}")
    for name in sorted(c.floor_violations() - b.floor_violations()):
        out.append(f"criterion {name} now below its floor")
    for name in sorted(b.floor_violations() - c.floor_violations()):
        out.append(f"criterion {name} back above its floor")
    if c.error and not b.error:
        out.append(f"target error: {c.error}")
    elif b.error and not c.error:
        out.append("target error fixed")
    return out


def tie_break_row(a: RunStanding | None, b: RunStanding | None) -> dict[str, Any]:
    """The comparison's ``tie_break`` of the baseline's standing ``a`` and the candidate's
    ``b`` (``None``: a side without weighted scores)."""
    if a is None or b is None:
        return {"winner": None, "rule": "none", "reason": "no weighted scores to rank the runs by"}
    result = tie_break(a, b)
    winner = {"a": "baseline", "b": "candidate"}.get(result.winner or "")
    reason = result.reason.replace("run a", "baseline").replace("run b", "candidate")
    values = result.values or (None, None)
    return {
        "winner": winner,
        "rule": result.rule,
        "reason": reason,
        "baseline_value": values[0],
        "candidate_value": values[1],
    }
