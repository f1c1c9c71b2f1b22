"""A judge's figures read from a store: what ``aieval judges`` prints, what the viewer's run page
and the review server's live per-queue figures show. One reading, so the three agree.

The labels are the store's, their design weights the judge's review queues'
(``Store.judge_designs``); nothing here is read from a request.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aieval.core import ReviewLabel
from aieval.errors import ConfigError
from aieval.judges._agreement import Agreement, ReviewDesign, SampleKey, agreement
from aieval.judges._certification import DEFAULT_KAPPA_FLOOR, DEFAULT_MIN_LABELS, Certificate
from aieval.judges._summary import JudgeRun, JudgeSummary, run_judges, summarize_judges
from aieval.store import ReviewQueue, Store

__all__ = ["StoredJudges", "judge_design", "queue_agreement", "stored_judges"]

#: Labels a live per-queue figure reads at most (the newest), so an answer stays quick.
QUEUE_LABELS = 5000


@dataclass(frozen=True, slots=True)
class StoredJudges:
    """The judges of some stored runs, summarized, and the certificates the store held."""

    summaries: list[JudgeSummary]
    held: dict[str, Certificate]


def stored_judges(
    store: Store,
    run_ids: Sequence[str],
    *,
    labels: Iterable[ReviewLabel] | None = None,
    scorer: str | None = None,
    floor: float = DEFAULT_KAPPA_FLOOR,
    min_labels: int = DEFAULT_MIN_LABELS,
) -> StoredJudges:
    """Every judge of the stored runs ``run_ids`` against its labels (the store's, or
    ``labels``), weighted by its review queues' designs, certified against its newest stored
    certificate, with each run's raw and corrected pass rate (:func:`summarize_judges`).

    Reads only: recording a new certificate is the caller's choice (``aieval judges`` does).

    Raises:
        RunNotFoundError: a run is not in the store.
        ConfigError: the runs have no judge (or none named ``scorer``).
    """
    runs = []
    for ref in run_ids:
        row = store.get_run(ref)
        runs.append(JudgeRun(row.id, row.config, list(store.iter_samples(row.id, texts=False))))
    held: dict[str, Certificate] = {}
    for cert in store.certificates(limit=10_000):  # newest first: the first per judge holds
        held.setdefault(
            cert.judge,
            Certificate(cert.judge, cert.n, cert.kappa, cert.bound, cert.floor, cert.certified_at),
        )
    digests = sorted({key.digest for r in runs for key, _ in run_judges(r.config)})
    # the review queues' designs weight the labels, whether they come from the store or a file
    designs = {digest: judge_design(store, digest) for digest in digests}
    if labels is None:  # the store's own labels of these runs' judges
        labels = [lab for digest in digests for lab in store.review_labels(judge=digest)]
    summaries = summarize_judges(
        runs,
        labels,
        scorer=scorer,
        floor=floor,
        min_labels=min_labels,
        certificates=held,
        now=time.time(),
        designs=designs,
    )
    return StoredJudges(summaries, held)


def judge_design(store: Store, digest: str) -> list[ReviewDesign]:
    """The review queues of the judge ``digest`` in ``store``, as the design its labels are
    weighted by."""
    return [
        ReviewDesign(queue.id, queue.runs, weights)
        for queue, weights in store.judge_designs(digest)
    ]


def queue_agreement(store: Store, queue: ReviewQueue, threshold: float) -> Agreement:
    """The judge against the labels saved in ``queue`` (the newest :data:`QUEUE_LABELS`),
    weighted by that queue's own design: the live figures of the review page.

    Raises:
        ConfigError: no label of the queue has a judge verdict and a human majority yet.
    """
    labels = store.review_labels(queue=queue.id)[-QUEUE_LABELS:]
    if not labels:
        raise ConfigError("no label saved in this queue yet")
    verdicts: dict[SampleKey, bool] = {}
    for label in labels:
        key = (label.run_id, label.sample_id)
        if key in verdicts:
            continue
        score = store.get_sample(*key).scores.get(queue.judge.scorer)
        if score is None or score.value is None:
            continue
        verdicts[key] = score.unreadable is None and score.value >= threshold
    design = ReviewDesign(queue.id, queue.runs, store.review_weights(queue.id))
    return agreement(
        labels, verdicts, judge=queue.judge.digest, threshold=threshold, design=[design]
    )
