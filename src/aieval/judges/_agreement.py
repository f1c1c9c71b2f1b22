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
    stratum_sizes,
    weighted_agreement,
    wilson_interval,
)
from aieval.store import ReviewWeight

__all__ = ["Agreement", "ReviewDesign", "SampleKey", "agreement", "judge_verdicts"]

#: ``(run_id, sample_id)``: one judged sample.
SampleKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class ReviewDesign:
    """How one review queue drew its items: the queue, the runs it drew from, and every item's
    stratum and design weight, labelled or not (``Store.review_weights``), so each stratum's
    size is the sum of its weights."""

    queue: str
    runs: tuple[str, ...]
    weights: Mapping[SampleKey, ReviewWeight]


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
        unmatched: labels on samples without a verdict of the judge in ``verdicts`` (no run
            of it given graded them, or it left them unscored).
        base_rate: share of ``items`` the humans passed.
        judge_human: Cohen's kappa of the judge against the reference, with its interval (the
            seeded bootstrap; where a cell of the 2x2 table is empty or the bootstrap has no
            width, widened to the analytic interval of the table with ``z²/8`` added to each
            cell, so perfect agreement on few items is not read as certainty). When kappa is
            undefined (``judge_human_undefined`` says why) it is 0 with the interval -1 to 1.
        human_human: Fleiss' kappa over the items with two or more reviewers (seeded
            bootstrap interval over items), the ceiling a judge can be held to; ``None`` with
            fewer than two such items.
        human_human_items: items with two or more reviewers.
        tpr / tnr: the judge's pass share among human-pass items (sensitivity) and fail share
            among human-fail items (specificity), Wilson intervals; ``None`` without such items.
        true_pos / positives / true_neg / negatives: the counts behind them.
        judge_rate: the judge's pass share on ``items``.
        judge_human_undefined: why the judge-human kappa is undefined (no human-fail or
            human-pass labels, or a judge that passed or failed every item), else ``None``;
            no decision rests on an undefined kappa.
        weighted: ``judge_human``, ``tpr``, ``tnr`` and ``base_rate`` are design-weighted to
            the runs the review queue(s) drew from (:func:`aieval.stats.weighted_agreement`),
            not the labelled items' own figures. The counts and ``human_human`` never are.
        unweighted: why the figures are the labelled items' own although a design was given
            (or that none was), else ``None``.
        rates_cov: when weighted by a stratified design, the delta-method ``(var_tpr,
            var_tnr, cov)`` of the weighted TPR and TNR (the corrected pass rate needs them);
            ``None`` otherwise (the counts give them).
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
    judge_human_undefined: str | None = None
    weighted: bool = False
    unweighted: str | None = "no review design given"
    rates_cov: tuple[float, float, float] | None = None

    @property
    def kappa_name(self) -> str:
        """``weighted kappa`` or ``kappa``, for sentences."""
        return "weighted kappa" if self.weighted else "kappa"

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
            "judge_human_kappa": None if self.judge_human_undefined else ci(self.judge_human),
            "judge_human_undefined": self.judge_human_undefined,
            "human_human_kappa": ci(self.human_human),
            "human_human_items": self.human_human_items,
            "tpr": ci(self.tpr),
            "tnr": ci(self.tnr),
            "true_pos": self.true_pos,
            "positives": self.positives,
            "true_neg": self.true_neg,
            "negatives": self.negatives,
            "judge_rate": self.judge_rate,
            "weighted": self.weighted,
            "unweighted": self.unweighted,
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
    design: Sequence[ReviewDesign] | None = None,
) -> Agreement:
    """Judge-human and human-human agreement of one judge, TPR and TNR, each with its interval.

    Args:
        labels: reviewers' labels; those of other judges are ignored when ``judge`` is given.
        verdicts: the judge's pass/fail per ``(run_id, sample_id)`` (see
            :func:`judge_verdicts`).
        judge: the judge's digest; may be left out when every label is for one judge.
        threshold: a score label is pass at or above it.
        seed: the human-human bootstrap's seed, so a report is reproducible.
        design: the review queues of this judge; when they combine (:func:`_design_strata`),
            judge-human kappa, TPR, TNR and the base rate are weighted by it.

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
    keys: list[SampleKey] = []
    ties = 0
    for key, votes in by_item.items():
        passes = sum(votes)
        if 2 * passes == len(votes):
            ties += 1
            continue
        human.append(2 * passes > len(votes))
        judged.append(verdicts[key])
        keys.append(key)
    if not human:
        raise ConfigError(
            f"judge {name}: no labelled sample has both a judge verdict and a human majority "
            f"({len(rows)} label(s), {unmatched} on samples no run of the judge graded, {ties} "
            "tied item(s)); label samples of the judge's runs"
        )
    true_pos = sum(h and j for h, j in zip(human, judged, strict=True))
    true_neg = sum(not h and not j for h, j in zip(human, judged, strict=True))
    positives = sum(human)
    negatives = len(human) - positives
    judge_human, undefined = _judge_human(human, judged)
    multi = [
        (sum(v), len(v) - sum(v)) for v in by_item.values() if len(v) >= 2
    ]  # pass and fail counts per item
    tpr = wilson_interval(true_pos, positives) if positives else None
    tnr = wilson_interval(true_neg, negatives) if negatives else None
    base_rate = positives / len(human)
    weighted = False
    unweighted: str | None = "no review design given"
    rates_cov: tuple[float, float, float] | None = None
    if design is not None:
        strata, why = _design_strata(keys, design)
        if strata is None:
            unweighted = why
        elif len(strata[2]) == 1:
            # every item stands for as many samples: the labelled items' own figures are the
            # design-weighted ones (a self-weighting sample), and they stay exactly as they were
            weighted, unweighted = True, None
        elif undefined is None:
            try:
                figures = weighted_agreement(judged, human, strata[0], strata[1])
            except ConfigError as exc:
                unweighted = str(exc)
            else:
                judge_human, tpr, tnr = figures.kappa, figures.tpr, figures.tnr
                base_rate, weighted, unweighted = figures.base_rate, True, None
                rates_cov = figures.rates_cov
        else:
            unweighted = f"kappa is undefined ({undefined})"
    return Agreement(
        judge=name,
        threshold=threshold,
        labels=sum(len(v) for v in by_item.values()),
        reviewers=len({lab.reviewer for lab in rows if (lab.run_id, lab.sample_id) in by_item}),
        items=len(human),
        ties=ties,
        unmatched=unmatched,
        base_rate=base_rate,
        judge_human=judge_human,
        human_human=_human_human(multi, seed),
        human_human_items=len(multi),
        tpr=tpr,
        tnr=tnr,
        true_pos=true_pos,
        positives=positives,
        true_neg=true_neg,
        negatives=negatives,
        judge_rate=sum(judged) / len(judged),
        judge_human_undefined=undefined,
        weighted=weighted,
        unweighted=unweighted,
        rates_cov=rates_cov,
    )


def _design_strata(
    keys: Sequence[SampleKey], design: Sequence[ReviewDesign]
) -> tuple[tuple[list[str], dict[str, float], set[float]] | None, str]:
    """Each labelled item's stratum, every stratum's size and the distinct design weights of
    the queues used, or why the queues give none.

    Queues combine when they drew from disjoint runs: each covers its own runs, so their
    strata (kept apart, named by queue) partition the union of the runs. Only queues holding a
    labelled item take part; every labelled item must be in one of them, and every stratum of
    them must hold a labelled item (else its share of the runs is unmeasured).
    """
    if not design:
        return None, "the judge has no review queue, so its labels have no design weight"
    where: dict[SampleKey, ReviewDesign] = {}
    for queue in design:
        for key in queue.weights:
            if key in where:
                return None, (
                    f"queues {where[key].queue} and {queue.queue} both drew sample {key[1]!r} "
                    f"of run {key[0]}; overlapping designs do not combine"
                )
            where[key] = queue
    outside = [key for key in keys if key not in where]
    if outside:
        run_id, sample_id = outside[0]
        return None, (
            f"{len(outside)} labelled item(s) are in no review queue of this judge (e.g. "
            f"sample {sample_id!r} of run {run_id}), so they have no design weight"
        )
    used = {where[key].queue: where[key] for key in keys}
    owner: dict[str, str] = {}
    for queue in used.values():
        for run_id in queue.runs:
            if owner.setdefault(run_id, queue.queue) != queue.queue:
                return None, (
                    f"queues {owner[run_id]} and {queue.queue} both drew from run {run_id}; "
                    "queues of one judge combine only over disjoint runs"
                )
    sizes: dict[str, float] = {}
    for queue in used.values():
        own = stratum_sizes((w.stratum, w.weight) for w in queue.weights.values())
        sizes.update({f"{queue.queue}/{name}": size for name, size in own.items()})
    strata = [f"{where[key].queue}/{where[key].weights[key].stratum}" for key in keys]
    empty = sorted(set(sizes) - set(strata))
    if empty:
        return None, (
            f"stratum {empty[0]} holds no labelled item with a human majority yet, so its "
            "share of the run is unmeasured; label at least one item in each stratum"
        )
    drawn = {
        1.0 if w.weight is None else w.weight for q in used.values() for w in q.weights.values()
    }
    return (strata, sizes, drawn), ""


def _judge_human(
    human: Sequence[bool], judged: Sequence[bool], confidence: float = 0.95
) -> tuple[ConfidenceInterval, str | None]:
    """The judge-human kappa and its interval, or why it is undefined."""
    n, positives, passes = len(human), sum(human), sum(judged)
    why = (
        "no human-fail labels"
        if positives == n
        else "no human-pass labels"
        if positives == 0
        else "the judge passed every labelled item (no judge-fail)"
        if passes == n
        else "the judge failed every labelled item (no judge-pass)"
        if passes == 0
        else None
    )
    if why is not None:
        # kappa is 0/0 here: an interval of -1 to 1 says nothing, and no floor is met by it
        return ConfidenceInterval(0.0, -1.0, 1.0, confidence), why
    # kappa_interval widens itself at the boundary (an empty cell), so perfect agreement on
    # few items is not read as certainty
    return kappa_interval(human, judged, confidence=confidence), None


def _human_human(counts: Sequence[tuple[int, int]], seed: int) -> ConfidenceInterval | None:
    if len(counts) < 2:
        return None
    # Items are resampled whole, so the reviewers of one item stay together.
    return bootstrap_ci(lambda rows: fleiss_kappa(rows), counts, seed=seed)
