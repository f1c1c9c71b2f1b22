"""A review queue's live figures: the judge against the labels saved in the queue so far,
weighted by that queue's design; what the review page shows after each save.

The labels are the store's and the design weights the queue's; nothing is read from a request.
"""

from __future__ import annotations

from aieval.errors import ConfigError
from aieval.judges._agreement import Agreement, ReviewDesign, SampleKey, agreement
from aieval.store import ReviewQueue, Store

__all__ = ["QUEUE_LABELS", "queue_agreement"]

#: Labels a live per-queue figure reads at most (the newest), so an answer stays quick.
QUEUE_LABELS = 5000


def queue_agreement(store: Store, queue: ReviewQueue, threshold: float) -> Agreement:
    """The judge against the labels saved in ``queue`` (the newest :data:`QUEUE_LABELS`),
    weighted by that queue's own design, with the intervals :func:`agreement` gives (the
    function ``aieval judges`` figures with).

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
