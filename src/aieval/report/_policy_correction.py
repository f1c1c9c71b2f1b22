"""Rule 11 of the promotion policy: a judge scorer's pass rate, corrected for the judge's errors,
is not worse in the candidate (``judge_correction``).

Each judge scorer both runs graded with the same judge (same :class:`~aieval.core.JudgeKey`) is
compared on Rogan-Gladen corrected rates. With TPR and TNR shared (one judge, one set of
labels), ``theta_c - theta_b = (p_c - p_b) / J`` with ``J = TPR + TNR - 1``: the specificity
cancels from the difference. Its variance by the delta method, on the paired samples,

    Var = var(d) / (n J^2) + dbar^2 Var(J) / J^4,   Var(J) = q1(1-q1)/(m1+2) + q0(1-q0)/(m0+2)

where ``d`` is the candidate's verdict minus the baseline's per paired sample (0/1), ``dbar``
its mean, and ``q1``, ``q0`` the adjusted TPR and TNR (one added to each side, as in
``aieval.stats.rogan_gladen``). When the judge's labels are design-weighted by its review
queues, TPR and TNR are the weighted ones (``aieval.judges.judge_error_rates``, as
``aieval judges`` uses) and ``Var(J) = var(TPR) + var(TNR) + 2 cov`` from the stratified cells.
The one-sided bound at the policy's ``alpha`` is held against ``noninferiority_margin``
percentage points, as the raw pass-rate rule does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

from aieval.core import JudgeKey
from aieval.errors import ConfigError
from aieval.judges import (
    SampleKey,
    agreement,
    corrected_pass_rate,
    judge_design,
    judge_error_rates,
    judge_verdicts,
    labelled_verdicts,
    run_judges,
)
from aieval.report._evidence import RuleResult
from aieval.report._policy_model import PromotionPolicy
from aieval.stats import ErrorRates
from aieval.store import RunRow, Store

__all__ = ["RULE", "corrected_difference", "corrected_rule"]

RULE = "judge_corrected_pass_rate"


def corrected_difference(
    deltas: list[int],
    *,
    true_pos: int = 0,
    positives: int = 0,
    true_neg: int = 0,
    negatives: int = 0,
    rates: ErrorRates | None = None,
) -> tuple[float, float]:
    """The corrected pass rates' difference (candidate - baseline) and its standard error.

    ``deltas`` holds ``candidate - baseline`` (each -1, 0 or 1) per paired sample. The judge's
    TPR and TNR are ``rates`` (weighted or not, see ``aieval.judges.judge_error_rates``), else
    the counts given.

    Example:
        >>> diff, se = corrected_difference([0] * 90 + [-1] * 10, true_pos=45, positives=50,
        ...                                 true_neg=35, negatives=50)
        >>> round(diff, 3), round(se, 3)
        (-0.167, 0.055)
    """
    n = len(deltas)
    if rates is None:
        rates = ErrorRates.from_counts(true_pos, positives, true_neg, negatives)
    youden, var_youden = rates.youden, rates.youden_variance()
    mean = sum(deltas) / n
    var_d = sum((d - mean) ** 2 for d in deltas) / (n - 1) if n > 1 else 0.0
    var = var_d / (n * youden**2) + mean**2 * var_youden / youden**4
    return mean / youden, math.sqrt(var)


def corrected_rule(
    stores: tuple[Store, Store], rows: tuple[RunRow, RunRow], policy: PromotionPolicy
) -> RuleResult | None:
    """Rule 11 on the baseline and candidate (``stores`` and ``rows`` in that order; labels
    from the candidate's store); ``None`` unless the policy sets ``judge_correction``."""
    if not policy.judge_correction:
        return None
    base = {k.digest: (k, t) for k, t in run_judges(rows[0].config)}
    cand = {k.digest: (k, t) for k, t in run_judges(rows[1].config)}
    if not base and not cand:
        return RuleResult(RULE, True, "neither run has a judge scorer: nothing to correct")
    results: list[dict[str, Any]] = []
    for digest in sorted(base.keys() | cand.keys()):
        key, threshold = cand.get(digest) or base[digest]
        if digest not in base or digest not in cand:
            results.append(
                _held(key, "grades only one of the runs; corrected rates of different judges "
                      "are not compared")
            )  # fmt: skip
            continue
        results.append(_judge(stores, rows, key, threshold, policy))
    failed = [r for r in results if r["outcome"] == "fail"]
    held = [r for r in results if r["outcome"] == "inconclusive"]
    reason = "; ".join(r["reason"] for r in (failed or held or results))
    details = {"margin": policy.noninferiority_margin, "alpha": policy.alpha, "judges": results}
    if failed:
        return RuleResult(RULE, False, reason, details)
    if held:
        return RuleResult(RULE, False, reason, details, inconclusive=True)
    return RuleResult(RULE, True, reason, details)


def _held(key: JudgeKey, why: str) -> dict[str, Any]:
    return {
        "judge": key.label(),
        "digest": key.digest,
        "outcome": "inconclusive",
        "reason": f"{key.label()}: {why}",
    }


def _judge(
    stores: tuple[Store, Store],
    rows: tuple[RunRow, RunRow],
    key: JudgeKey,
    threshold: float,
    policy: PromotionPolicy,
) -> dict[str, Any]:
    labels = stores[1].review_labels(key.digest)
    if not labels:
        return _held(key, f"no review labels (digest {key.digest}): no corrected rate")
    verdicts, _ = labelled_verdicts(stores[1], key, labels)
    sides: list[dict[SampleKey, bool]] = [
        judge_verdicts(
            store.iter_samples(row.id, texts=False), key.scorer, run_id=row.id,
            threshold=threshold,
        )
        for store, row in zip(stores, rows, strict=True)
    ]  # fmt: skip
    try:
        figures = agreement(
            labels, verdicts, judge=key.digest, threshold=threshold,
            design=judge_design(stores[1], key.digest),
        )  # fmt: skip
        rates = [corrected_pass_rate(side, figures) for side in sides]
    except ConfigError as exc:
        return _held(key, f"no corrected rate: {exc}")
    by_id = [{sample: v for (_, sample), v in side.items()} for side in sides]
    paired = sorted(by_id[0].keys() & by_id[1].keys())
    if not paired:
        return _held(key, "no sample was judged in both runs")
    deltas = [int(by_id[1][s]) - int(by_id[0][s]) for s in paired]
    error = judge_error_rates(figures)
    diff, se = corrected_difference(deltas, rates=error)
    z = NormalDist().inv_cdf(1.0 - policy.alpha)
    low, high = diff - z * se, diff + z * se
    margin = policy.noninferiority_margin / 100.0
    outcome = "pass" if low >= -margin else "fail" if high < -margin else "inconclusive"
    raw = (sum(deltas) / len(deltas)) * 100
    text = (
        f"{key.label()}: corrected pass rate {rates[1].corrected:.1%} "
        f"({rates[1].low:.1%}-{rates[1].high:.1%}) vs baseline {rates[0].corrected:.1%} "
        f"({rates[0].low:.1%}-{rates[0].high:.1%}), raw {rates[1].raw:.1%} vs "
        f"{rates[0].raw:.1%}; corrected difference {diff * 100:+.1f} points on {len(paired)} "
        f"paired samples (raw {raw:+.1f}), one-sided {1 - policy.alpha:.0%} bounds "
        f"[{low * 100:+.1f}, {high * 100:+.1f}] vs margin -{policy.noninferiority_margin:g}"
        + _weighting(error)
    )
    return {
        "judge": key.label(),
        "digest": key.digest,
        "outcome": outcome,
        "reason": text,
        "paired": len(paired),
        "difference": diff,
        "se": se,
        "low": low,
        "high": high,
        "baseline": _rate(rates[0]),
        "candidate": _rate(rates[1]),
        "weighted": error.weighted,
        "unweighted": error.unweighted,
    }


def _weighting(rates: ErrorRates) -> str:
    """How the reason says where TPR and TNR came from."""
    if rates.weighted:
        return "; weighted TPR/TNR"
    return f" (unweighted: {rates.unweighted})" if rates.unweighted else ""


def _rate(rate: Any) -> Mapping[str, Any]:
    return dict(rate.to_dict())
