"""How well a judge agrees with its human reviewers on pass/fail, every figure with its interval.

Labels are :class:`aieval.core.ReviewLabel` (from the store's review queue or a JSONL file);
the judge's verdicts are its pass/fail per sample, keyed by ``(run_id, sample_id)``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.core import ReviewLabel, SampleRecord
from aieval.errors import ConfigError
from aieval.stats import (
    ConfidenceInterval,
    bootstrap_ci,
    fleiss_kappa,
    kappa_interval,
    wilson_interval,
)

__all__ = ["Agreement", "SampleKey", "agreement", "judge_verdicts"]

#: ``(run_id, sample_id)``: one judged sample.
SampleKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Agreement:
    """A judge against human reviewers on pass/fail, with 95% intervals.

    The human reference of an item is the majority of its reviewers' pass/fail (each reviewer's
    latest label counts once); an item whose reviewers split evenly has none and is counted in
    ``ties``. A score label is pass at or above ``threshold``, as the judge's score is.

    Attributes:
        judge: the judge's digest (:attr:`aieval.core.JudgeKey.digest`).
        threshold: where a score becomes a pass.
        labels: labels used (latest per reviewer and item, on items the judge graded).
        reviewers: distinct reviewers among them.
        items: labelled items with a human reference (the n of every judge-human figure).
        ties: labelled items left out because their reviewers split evenly.
        unmatched: labels on samples the judge did not grade (or left unscored).
        base_rate: share of ``items`` the humans passed.
        judge_human: Cohen's kappa of the judge against the reference (analytic interval).
        human_human: Fleiss' kappa over the items with two or more reviewers (seeded
            bootstrap interval over items), the ceiling a judge can be held to; ``None`` with
            fewer than two such items.
        human_human_items: items with two or more reviewers.
        tpr / tnr: the judge's pass share among human-pass items (sensitivity) and fail share
            among human-fail items (specificity), Wilson intervals; ``None`` without such items.
        true_pos / positives / true_neg / negatives: the counts behind them.
        judge_rate: the judge's pass share on ``items``.
    """

    judge: str
    threshold: float
    labels: int
    reviewers: int
    items: int
    ties: int
    unmatched: int
    base_rate: float
    judge_human: ConfidenceInterval
    human_human: ConfidenceInterval | None
    human_human_items: int
    tpr: ConfidenceInterval | None
    tnr: ConfidenceInterval | None
    true_pos: int
    positives: int
    true_neg: int
    negatives: int
    judge_rate: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""

        def ci(value: ConfidenceInterval | None) -> dict[str, float] | None:
            return None if value is None else value.to_dict()

        return {
            "judge": self.judge,
            "threshold": self.threshold,
            "labels": self.labels,
            "reviewers": self.reviewers,
            "items": self.items,
            "ties": self.ties,
            "unmatched": self.unmatched,
            "base_rate": self.base_rate,
            "judge_human_kappa": ci(self.judge_human),
            "human_human_kappa": ci(self.human_human),
            "human_human_items": self.human_human_items,
            "tpr": ci(self.tpr),
            "tnr": ci(self.tnr),
            "true_pos": self.true_pos,
            "positives": self.positives,
            "true_neg": self.true_neg,
            "negatives": self.negatives,
            "judge_rate": self.judge_rate,
        }


def judge_verdicts(
    samples: Iterable[SampleRecord], scorer: str, *, run_id: str, threshold: float = 0.5
) -> dict[SampleKey, bool]:
    """The judge's pass/fail per sample of one run: its score at or above ``threshold``.

    A sample the judge could not read (``unreadable``) is a fail, as in the run; an unscored
    sample is left out.
    """
    out: dict[SampleKey, bool] = {}
    for sample in samples:
        score = sample.scores.get(scorer)
        if score is None or score.value is None:
            continue
        out[(run_id, sample.id)] = score.unreadable is None and score.value >= threshold
    return out


def latest_labels(labels: Iterable[ReviewLabel], judge: str | None = None) -> list[ReviewLabel]:
    """One label per reviewer and sample (the latest), for one judge.

    Raises:
        ConfigError: ``judge`` is not given and the labels are for several judges.
    """
    rows = list(labels)
    judges = {lab.judge for lab in rows}
    if judge is None:
        if len(judges) > 1:
            raise ConfigError(
                f"the labels are for {len(judges)} judges ({', '.join(sorted(judges))}); "
                "name the judge"
            )
        judge = next(iter(judges), "")
    latest: dict[tuple[str, str, str], ReviewLabel] = {}
    for lab in rows:
        if lab.judge != judge:
            continue
        key = (lab.run_id, lab.sample_id, lab.reviewer)
        if key not in latest or lab.labelled_at >= latest[key].labelled_at:
            latest[key] = lab
    return list(latest.values())


def agreement(
    labels: Iterable[ReviewLabel],
    verdicts: Mapping[SampleKey, bool],
    *,
    judge: str | None = None,
    threshold: float = 0.5,
    seed: int = 0,
) -> Agreement:
    """Judge-human and human-human agreement of one judge, TPR and TNR, each with its interval.

    Args:
        labels: reviewers' labels; those of other judges are ignored when ``judge`` is given.
        verdicts: the judge's pass/fail per ``(run_id, sample_id)`` (see
            :func:`judge_verdicts`).
        judge: the judge's digest; may be left out when every label is for one judge.
        threshold: a score label is pass at or above it.
        seed: the human-human bootstrap's seed, so a report is reproducible.

    Raises:
        ConfigError: no labelled item has a judge verdict and a human reference.
    """
    rows = latest_labels(labels, judge)
    if not rows:
        raise ConfigError(f"judge {judge or '(any)'}: no labels; label samples of its runs")
    name = judge if judge is not None else rows[0].judge
    by_item: dict[SampleKey, list[bool]] = defaultdict(list)
    unmatched = 0
    for lab in rows:
        key = (lab.run_id, lab.sample_id)
        if key in verdicts:
            by_item[key].append(lab.positive(threshold))
        else:
            unmatched += 1
    human: list[bool] = []
    judged: list[bool] = []
    ties = 0
    for key, votes in by_item.items():
        passes = sum(votes)
        if 2 * passes == len(votes):
            ties += 1
            continue
        human.append(2 * passes > len(votes))
        judged.append(verdicts[key])
    if not human:
        raise ConfigError(
            f"judge {name}: no labelled sample has both a judge verdict and a human majority "
            f"({len(rows)} label(s), {unmatched} on samples the judge did not grade, {ties} "
            "tied item(s)); label samples of the judge's runs"
        )
    true_pos = sum(h and j for h, j in zip(human, judged, strict=True))
    true_neg = sum(not h and not j for h, j in zip(human, judged, strict=True))
    positives = sum(human)
    negatives = len(human) - positives
    multi = [
        (sum(v), len(v) - sum(v)) for v in by_item.values() if len(v) >= 2
    ]  # pass and fail counts per item
    return Agreement(
        judge=name,
        threshold=threshold,
        labels=sum(len(v) for v in by_item.values()),
        reviewers=len({lab.reviewer for lab in rows if (lab.run_id, lab.sample_id) in by_item}),
        items=len(human),
        ties=ties,
        unmatched=unmatched,
        base_rate=positives / len(human),
        judge_human=kappa_interval(human, judged),
        human_human=_human_human(multi, seed),
        human_human_items=len(multi),
        tpr=wilson_interval(true_pos, positives) if positives else None,
        tnr=wilson_interval(true_neg, negatives) if negatives else None,
        true_pos=true_pos,
        positives=positives,
        true_neg=true_neg,
        negatives=negatives,
        judge_rate=sum(judged) / len(judged),
    )


def _human_human(counts: Sequence[tuple[int, int]], seed: int) -> ConfidenceInterval | None:
    if len(counts) < 2:
        return None
    # Items are resampled whole, so the reviewers of one item stay together.
    return bootstrap_ci(lambda rows: fleiss_kappa(rows), counts, seed=seed)
