"""A report's graded figures, one function each for the record path and the sums path: the gate
rows, the weighted score's coverage, the workflow groups and the agents."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aieval.grading import coverage_percent
from aieval.report._intervals import WILSON
from aieval.report._tally import GroupTally
from aieval.stats import wilson_interval
from aieval.store import AgentSums, GradedSums, WorkflowSums

__all__ = ["agent_rows", "coverage_block", "gate_rows", "workflow_groups"]


def gate_rows(gates: Iterable[tuple[str, int, int]], confidence: float) -> list[dict[str, Any]]:
    """The report's ``gates``: each ``(name, failures, n)`` with its failure rate's Wilson
    interval, the most failed first."""
    rows = []
    for name, failures, n in gates:
        ci = wilson_interval(failures, n, confidence=confidence)
        rows.append(
            {
                "name": name,
                "failures": failures,
                "n": n,
                "rate": ci.estimate,
                "low": ci.low,
                "high": ci.high,
                "method": WILSON,
            }
        )
    return sorted(rows, key=lambda r: (-r["rate"], r["name"]))


def coverage_block(
    block: dict[str, Any] | None,
    n: int,
    mean: float,
    minimum: float,
    unscored: Mapping[str, int],
) -> dict[str, Any] | None:
    """The weighted score's ``block``, with ``coverage`` when some graded sample's score stands
    on part of its profile's weights (``n`` samples with a share, their ``mean`` and
    ``minimum``; ``unscored`` the criteria left out, in the order first met)."""
    if block is None or not n or minimum >= 1.0:
        return block
    names = ", ".join(f"{name} ({count} of {n})" for name, count in unscored.items())
    text = f"over {coverage_percent(mean)} of the weights on average; unscored: {names}"
    return {
        **block,
        "coverage": {
            "mean_share": mean,
            "min_share": minimum,
            "unscored": dict(unscored),
            "text": text,
        },
    }


def workflow_groups(sums: GradedSums, run_workflow: Any, confidence: float) -> list[dict[str, Any]]:
    """The report's ``groups.workflow`` from the sums: the samples whose evaluation names no
    workflow are the run's (``run_workflow``; left out without one)."""
    groups: dict[str, GroupTally] = {}
    for found in sums.workflows:
        key = found.name or (None if run_workflow is None else str(run_workflow))
        if key is not None:
            _merge(groups.setdefault(key, GroupTally()), found)
    return [g.to_dict(key, True, confidence) for key, g in sorted(groups.items())]


def agent_rows(agents: Iterable[AgentSums]) -> list[dict[str, Any]]:
    """The report's ``groups.agents`` from the sums (``AgentTally.to_dict``), by role."""
    return [
        {
            "name": a.name,
            "runs": a.runs,
            "steps": a.steps,
            "failures": a.failures,
            "retries": a.retries,
            "duration_s": a.duration_s,
            "tokens": int(a.tokens) if a.tokens is not None else None,
            "cost_usd": a.cost_usd,
            "scores": {k: total / n for k, (n, total) in sorted(a.scores.items())},
        }
        for a in sorted(agents, key=lambda a: a.name)
    ]


def _merge(group: GroupTally, found: WorkflowSums) -> None:
    group.samples += found.samples
    group.passed += found.passed
    group.weighted_sum += found.weighted_total
    group.weighted_n += found.weighted_n
    group.grades.update(found.grades)
