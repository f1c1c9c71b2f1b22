"""Building a review queue from stored runs and a scorer: the judge's key, its judged samples,
the selection, all read from the store (the server's API and ``aieval review create`` share it)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.core import JudgeKey
from aieval.errors import ReviewError
from aieval.judges._selection import DEFAULT_MIX, Judged, select_items, verdict_values
from aieval.store import NewReviewQueue, Store

__all__ = ["QueueRequest", "build_queue", "judge_of_runs"]


@dataclass(frozen=True, slots=True)
class QueueRequest:
    """What a queue is asked to be: which runs and scorer, how many items, chosen how."""

    runs: tuple[str, ...]
    scorer: str
    size: int = 50
    reviewers: int = 2
    mix: Mapping[str, float] | None = None
    seed: int = 0
    name: str | None = None
    created_by: str | None = None


def _scorer_entry(config: Mapping[str, Any], scorer: str) -> Mapping[str, Any] | None:
    for entry in config.get("scorers") or ():
        if isinstance(entry, Mapping) and entry.get("name") == scorer:
            return entry
    return None


def _threshold(config: Mapping[str, Any], entry: Mapping[str, Any]) -> float:
    for value in (entry.get("threshold"), config.get("pass_threshold")):
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
    return 0.5


def judge_of_runs(store: Store, runs: Sequence[str], scorer: str) -> tuple[JudgeKey, float]:
    """The judge ``scorer`` of ``runs`` (its key from each run's stored scorer options) and
    its pass threshold.

    Raises:
        ReviewError: no runs, a run without that scorer, or runs whose judges differ (named).
    """
    if not runs:
        raise ReviewError("a review queue needs at least one run")
    keys: dict[str, JudgeKey] = {}
    threshold = 0.5
    for ref in runs:
        row = store.get_run(ref)
        config = row.config if isinstance(row.config, Mapping) else {}
        entry = _scorer_entry(config, scorer)
        if entry is None:
            raise ReviewError(f"run {row.id!r} has no scorer {scorer!r}: pick one it was scored by")
        options = entry.get("options")
        keys[row.id] = JudgeKey.of(scorer, options if isinstance(options, Mapping) else {})
        threshold = _threshold(config, entry)
    distinct = sorted({key.digest for key in keys.values()})
    if len(distinct) > 1:
        groups = {
            digest: sorted(run for run, key in keys.items() if key.digest == digest)
            for digest in distinct
        }
        shown = "; ".join(f"{', '.join(r)} ({dict(keys[r[0]].identity)})" for r in groups.values())
        raise ReviewError(
            f"the runs' judges {scorer!r} differ, so their labels would not pool: {shown}."
            " Make one queue per judge"
        )
    return next(iter(keys.values())), threshold


def _judged(store: Store, run_id: str, scorer: str) -> list[Judged]:
    out = []
    for sample in store.iter_samples(run_id):
        score = sample.scores.get(scorer)
        if score is None or score.value is None or not math.isfinite(score.value):
            continue
        out.append(Judged(run_id, sample.id, float(score.value), verdict_values(score.metadata)))
    return out


def build_queue(store: Store, request: QueueRequest) -> str:
    """Choose the items and store the queue; return its id.

    Raises:
        ReviewError: the runs' judges differ, or they hold no judged sample.
    """
    judge, threshold = judge_of_runs(store, request.runs, request.scorer)
    run_ids = tuple(store.get_run(ref).id for ref in request.runs)
    judged = [item for run_id in run_ids for item in _judged(store, run_id, request.scorer)]
    if not judged:
        raise ReviewError(
            f"the runs {', '.join(run_ids)} hold no sample scored by {request.scorer!r}"
        )
    mix = dict(request.mix or DEFAULT_MIX)
    picks = select_items(judged, request.size, threshold=threshold, mix=mix, seed=request.seed)
    sizes: dict[str, float] = {}
    for pick in picks:
        sizes[pick.stratum] = sizes.get(pick.stratum, 0.0) + pick.weight
    selection = {
        "mix": mix,
        "size": request.size,
        "seed": request.seed,
        "threshold": threshold,
        "strata": {name: round(n) for name, n in sorted(sizes.items())},
    }
    name = request.name or f"{judge.label()} ({len(picks)} items)"
    return store.create_review_queue(
        NewReviewQueue(
            name=name,
            judge=judge,
            runs=run_ids,
            items=tuple((p.run_id, p.sample_id, p.stratum, p.weight) for p in picks),
            selection=selection,
            reviewers=request.reviewers,
            created_by=request.created_by,
        )
    )
