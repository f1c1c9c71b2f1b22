"""Layer 3: runtime, retry amplification, tokens and cost, normalized against profile SLOs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from aieval.grading import Profile, normalize
from aieval.workflows._model import WorkflowRun

__all__ = ["efficiency", "percentile", "run_metrics"]

_NOT_EXECUTED = ("pending", "skipped")


def run_metrics(run: WorkflowRun) -> dict[str, float | None]:
    """The raw efficiency numbers of one run, keyed like profile SLOs.

    ``retry_amplification`` is attempts per executed step: 1.0 means no retries, 1.5 means
    every other step needed one retry.
    """
    executed = [s for s in run.steps if s.status not in _NOT_EXECUTED]
    retries = run.retries
    amplification = (len(executed) + retries) / len(executed) if executed else None
    tokens = run.tokens
    return {
        "latency_s": run.duration_s,
        "retries": float(retries),
        "retry_amplification": amplification,
        "tokens": float(tokens) if tokens is not None else None,
        "cost_usd": run.cost,
    }


def efficiency(
    run: WorkflowRun, profile: Profile, budgets: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """Raw metrics, each normalized with ``lower_is_better`` against the profile's SLO for it
    (metrics without an SLO or a value are left out of ``normalized``), and budget checks."""
    raw = run_metrics(run)
    normalized: dict[str, float] = {}
    for metric, bounds in profile.slo.items():
        value = raw.get(metric)
        if value is not None:
            normalized[metric] = normalize(
                "lower_is_better", value, slo_good=bounds.good, slo_bad=bounds.bad
            )
    checks = {
        key: {"budget": limit, "used": raw.get(key), "within": _within(raw.get(key), limit)}
        for key, limit in (budgets or {}).items()
    }
    return {
        "raw": raw,
        "normalized": normalized,
        "slo": {k: {"good": v.good, "bad": v.bad} for k, v in profile.slo.items()},
        "budgets": checks,
    }


def _within(used: float | None, limit: float) -> bool | None:
    return None if used is None else used <= limit


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (``q`` in 0..1) of ``values``; ``None`` when empty.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5), percentile([5.0], 0.95), percentile([], 0.5)
    (2.5, 5.0, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
