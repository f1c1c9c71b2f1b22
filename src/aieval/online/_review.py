"""A rule's failing and unsure items sent to its review queue (``review:`` in the rule).

An item is sent when its sample **failed** (the run's grader said so), or when the rule's judge
was **unsure** of it: the judge was sampled several times and its samples fall on both sides of
its pass threshold (they disagree on the verdict), or its score rests on malformed verdicts.
The queue (named by the rule) is created with the judge's key on first use; a queue of that
name kept for another judge is refused, so its labels never mix two judges. Items are added
once (a batch sent again adds nothing), each in stratum ``failed`` or ``unsure`` with equal
weights: the queue shows people what online scoring doubted, not a stratified sample of all
items, so agreement figures from it describe those items only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from aieval.core import ScoreRecord
from aieval.errors import ReviewError
from aieval.judges import judge_of_runs, verdict_values
from aieval.online._model import OnlineRule
from aieval.store import NewReviewQueue, Store

__all__ = ["send_to_review", "unsure"]


def unsure(score: ScoreRecord, threshold: float) -> bool:
    """Whether a judge's score is one it was unsure of: its samples on both sides of
    ``threshold``, or its verdicts malformed."""
    if score.unreadable is not None:
        return True
    verdicts = verdict_values(score.metadata) or _tenths(score.metadata.get("verdicts"))
    return any(v >= threshold for v in verdicts) and any(v < threshold for v in verdicts)


def _tenths(verdicts: Any) -> tuple[float, ...]:
    """The samples of a judge scoring 0..10 (``llm_judge``'s stored verdicts: their ``score``
    on that scale) on 0..1; values that are not numbers in 0..10 left out."""
    out = []
    for verdict in verdicts if isinstance(verdicts, list) else ():
        value = verdict.get("score") if isinstance(verdict, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 10:
            out.append(float(value) / 10.0)
    return tuple(out)


def _finite(score: ScoreRecord | None) -> TypeGuard[ScoreRecord]:
    return score is not None and score.value is not None and math.isfinite(score.value)


def _judge_scorer(rule: OnlineRule, config: Mapping[str, Any], judged: set[str]) -> str:
    """The rule's judge: the alert's scorer when it is one, else the run's first judge."""
    if rule.alert is not None and rule.alert.scorer in judged:
        return rule.alert.scorer
    for entry in config.get("scorers") or ():
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if name in judged:
            return str(name)
    if judged:
        return sorted(judged)[0]
    raise ReviewError(
        f"online rule {rule.name!r} sends items to review queue {rule.review!r}, but its"
        " scoring has no judge: a review queue checks a judge; add one to the rule's scorers"
        " or remove `review`"
    )


def send_to_review(store: Store, rule: OnlineRule, run_id: str, sample_ids: Iterable[str]) -> int:
    """Add the failing and unsure samples among ``sample_ids`` of the window run ``run_id`` to
    ``rule``'s review queue (created when absent); answer how many items were added.

    Raises:
        ReviewError: the rule's scoring has no judge, or the queue of that name is another
            judge's.
    """
    if rule.review is None:
        return 0
    wanted = set(sample_ids)
    samples = [s for s in store.iter_samples(run_id, texts=False) if s.id in wanted]
    judged = {
        name for s in samples for name, score in s.scores.items() if "verdicts" in score.metadata
    }
    if not samples:
        return 0
    scorer = _judge_scorer(rule, store.get_run(run_id).config or {}, judged)
    judge, threshold = judge_of_runs(store, [run_id], scorer)
    items: list[tuple[str, str]] = []
    for sample in samples:
        score = sample.scores.get(scorer)
        if sample.passed is False:
            items.append((sample.id, "failed"))
        elif _finite(score) and unsure(score, threshold):
            items.append((sample.id, "unsure"))
    if not items:
        return 0
    try:
        queue = store.review_queue(rule.review)
    except ReviewError:
        store.create_review_queue(
            NewReviewQueue(
                name=rule.review,
                judge=judge,
                runs=(run_id,),
                items=tuple((run_id, sid, stratum) for sid, stratum in items),
                selection={"online_rule": rule.name, "sent": ["failed", "unsure"]},
                created_by=f"online/{rule.name}",
            )
        )
        return len(items)
    if queue.judge.digest != judge.digest:
        raise ReviewError(
            f"review queue {rule.review!r} checks judge {queue.judge.label()}, not online rule"
            f" {rule.name!r}'s {judge.label()}: name another queue in the rule's `review`"
        )
    return store.append_review_items(queue.id, run_id, items)
