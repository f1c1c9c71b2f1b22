"""Rule 10 of the promotion policy: the judges a comparison rests on are certified.

With ``require_certified_judges``, every judge scorer of either run (``run_judges`` on its
stored config, so by :class:`~aieval.core.JudgeKey`) is certified with
:func:`aieval.judges.certify` on the review labels and newest certificate of the candidate's
store. The rule reads only run configs, labels and the labelled samples, so every comparison
path (records, columns, sums) gets the same result; ``compare_runs`` adds it to the decision.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from aieval.core import JudgeKey
from aieval.errors import ConfigError
from aieval.judges import (
    Certificate,
    Certification,
    CertificationStatus,
    certify,
    judge_design,
    labelled_verdicts,
    run_judges,
)
from aieval.report._evidence import RuleResult
from aieval.report._policy_model import PromotionPolicy
from aieval.store import RunRow, Store

__all__ = ["RULE", "certified_judges_rule", "judge_design", "labelled_verdicts"]

RULE = "certified_judges"


@dataclass(frozen=True, slots=True)
class _Judged:
    """One judge's standing: its key, and the certification or why there is none."""

    key: JudgeKey
    certification: Certification | None
    labels: int
    problem: str | None = None

    @property
    def certified(self) -> bool:
        cert = self.certification
        return cert is not None and cert.status is CertificationStatus.CERTIFIED

    def line(self, policy: PromotionPolicy) -> str:
        """One clause for the decision's reason."""
        name = self.key.label()
        cert = self.certification
        if cert is None:
            if not self.labels:
                return (
                    f"{name} has no review labels (digest {self.key.digest}): label at least "
                    f"{policy.judge_min_labels} items (aieval review)"
                )
            return f"{name} is uncertified: {self.problem}"
        return f"{name} is {cert.status}: {cert.reason}"

    def to_dict(self) -> dict[str, Any]:
        cert = self.certification
        kappa = None if cert is None else cert.agreement.judge_human
        status = "uncertified" if cert is None else str(cert.status)
        return {
            "judge": self.key.label(),
            "digest": self.key.digest,
            "status": status,
            "labels": self.labels,
            "n": 0 if cert is None else cert.agreement.items,
            "kappa": None if kappa is None else kappa.estimate,
            "kappa_low": None if kappa is None else kappa.low,
            "labels_needed": None if cert is None else cert.labels_needed,
            "weighted": cert is not None and cert.agreement.weighted,
            "unweighted": None if cert is None else cert.agreement.unweighted,
            "problem": self.problem,
        }


def certified_judges_rule(
    store: Store, rows: tuple[RunRow, RunRow], policy: PromotionPolicy
) -> RuleResult | None:
    """Rule 10 on the baseline and candidate runs ``rows``; ``None`` when the policy does not
    require certified judges. Labels and certificates are read from ``store`` (the candidate's):
    a baseline store given from elsewhere never certifies a judge."""
    if not policy.require_certified_judges:
        return None
    keys: dict[str, JudgeKey] = {}
    for row in rows:
        for key, _ in run_judges(row.config):
            keys.setdefault(key.digest, key)
    settings = {"floor": policy.judge_kappa_floor, "min_labels": policy.judge_min_labels}
    if not keys:
        return RuleResult(
            RULE, True, "neither run has a judge scorer: nothing to certify", {**settings}
        )
    judged = [_judge(store, key, policy) for key in keys.values()]
    details = {**settings, "judges": [j.to_dict() for j in judged]}
    held = [j for j in judged if not j.certified]
    if not held:
        names = ", ".join(j.key.label() for j in judged)
        return RuleResult(RULE, True, f"every judge is certified: {names}", details)
    reason = "; ".join(j.line(policy) for j in held)
    return RuleResult(RULE, False, reason, details, inconclusive=True)


def _judge(store: Store, key: JudgeKey, policy: PromotionPolicy) -> _Judged:
    labels = store.review_labels(key.digest)
    if not labels:
        return _Judged(key, None, 0)
    newest = store.certificates(key.digest, limit=1)
    held = (
        Certificate(c.judge, c.n, c.kappa, c.bound, c.floor, c.certified_at)
        if (c := next(iter(newest), None)) is not None
        else None
    )
    verdicts, threshold = labelled_verdicts(store, key, labels)
    try:
        cert = certify(
            labels,
            verdicts,
            judge=key.digest,
            floor=policy.judge_kappa_floor,
            min_labels=policy.judge_min_labels,
            certificate=held,
            threshold=threshold,
            now=time.time(),
            design=judge_design(store, key.digest),
        )
    except ConfigError as exc:
        return _Judged(key, None, len(labels), str(exc))
    return _Judged(key, cert, len(labels))
