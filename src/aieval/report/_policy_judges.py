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

from aieval.core import JudgeKey, ReviewLabel
from aieval.errors import ConfigError, RunNotFoundError
from aieval.judges import (
    Certificate,
    Certification,
    CertificationStatus,
    certify,
    judge_design,
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


def labelled_verdicts(
    store: Store, key: JudgeKey, labels: list[ReviewLabel]
) -> tuple[dict[tuple[str, str], bool], float]:
    """The judge's pass/fail on each labelled sample of a run it graded (same key), and the
    threshold its score passes at. A label on a run or sample not in the store, or on a run
    another judge graded, has no verdict (``certify`` counts it as unmatched)."""
    thresholds: dict[str, float | None] = {}
    verdicts: dict[tuple[str, str], bool] = {}
    for label in labels:
        run_id = label.run_id
        if run_id not in thresholds:
            thresholds[run_id] = _threshold(store, run_id, key)
        threshold = thresholds[run_id]
        if threshold is None or (run_id, label.sample_id) in verdicts:
            continue
        try:
            sample = store.get_sample(run_id, label.sample_id)
        except RunNotFoundError:
            continue
        score = sample.scores.get(key.scorer)
        if score is None or score.value is None:
            continue
        verdicts[(run_id, label.sample_id)] = score.unreadable is None and score.value >= threshold
    known = [t for t in thresholds.values() if t is not None]
    return verdicts, known[0] if known else 0.5


def _threshold(store: Store, run_id: str, key: JudgeKey) -> float | None:
    """Where the judge's score passes in run ``run_id``; ``None`` when the run is not in the
    store or was not graded by this judge."""
    try:
        row = store.get_run(run_id)
    except RunNotFoundError:
        return None
    return next((t for k, t in run_judges(row.config) if k.digest == key.digest), None)
