"""The judges' figures on what a store holds: its review labels, certificates and review
designs, and the judge's verdicts on labelled samples; what ``aieval judges``, reports and
comparisons read."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from aieval.core import JudgeKey, ReviewLabel
from aieval.errors import RunNotFoundError
from aieval.judges._agreement import ReviewDesign, SampleKey
from aieval.judges._certification import DEFAULT_KAPPA_FLOOR, DEFAULT_MIN_LABELS, Certificate
from aieval.judges._summary import JudgeRun, JudgeSummary, run_judges, summarize_judges
from aieval.store import Store

__all__ = ["judge_design", "labelled_verdicts", "stored_summaries"]


def stored_summaries(
    store: Store,
    runs: Sequence[JudgeRun],
    *,
    labels: Sequence[ReviewLabel] | None = None,
    scorer: str | None = None,
    floor: float = DEFAULT_KAPPA_FLOOR,
    min_labels: int = DEFAULT_MIN_LABELS,
    now: float | None = None,
    pool: bool = True,
) -> list[JudgeSummary]:
    """:func:`aieval.judges.summarize_judges` on what ``store`` holds for the judges of
    ``runs``: their newest certificates, review queues' designs and (unless ``labels`` are
    given) review labels. Nothing is written.

    The judge's labels on samples of other stored runs it graded (same key) count too (its
    agreement is the judge's, not one run's), as the comparison's ``certified_judges`` rule and
    the reports count them; those runs get no rate. ``pool=False`` keeps to ``runs``' labels.

    Raises:
        ConfigError: the runs have no judge (or none named ``scorer``).
    """
    keys = {key.digest: key for run in runs for key, _ in run_judges(run.config)}
    digests = sorted(keys)
    held: dict[str, Certificate] = {}
    for digest in digests:
        for c in store.certificates(digest, limit=1):  # the newest holds
            held[digest] = Certificate(c.judge, c.n, c.kappa, c.bound, c.floor, c.certified_at)
    designs = {digest: judge_design(store, digest) for digest in digests}
    given = (
        [lab for digest in digests for lab in store.review_labels(judge=digest)]
        if labels is None
        else list(labels)
    )
    pooled: dict[str, Mapping[SampleKey, bool]] = {}
    if pool:
        named = {run.run_id for run in runs}
        for digest, key in keys.items():
            elsewhere = [lab for lab in given if lab.judge == digest and lab.run_id not in named]
            if elsewhere:
                pooled[digest] = labelled_verdicts(store, key, elsewhere)[0]
    return summarize_judges(
        runs,
        given,
        scorer=scorer,
        floor=floor,
        min_labels=min_labels,
        certificates=held,
        now=time.time() if now is None else now,
        designs=designs,
        pooled=pooled,
    )


def judge_design(store: Store, digest: str) -> list[ReviewDesign]:
    """The review queues of the judge ``digest`` in ``store``, as the design its labels are
    weighted by."""
    return [
        ReviewDesign(queue.id, queue.runs, weights)
        for queue, weights in store.judge_designs(digest)
    ]


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
