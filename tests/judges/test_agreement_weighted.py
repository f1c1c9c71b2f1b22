"""Agreement weighted by the review queue's design: equal weights change nothing, a stratified
queue gives the run's kappa where the labelled items' own kappa is off, and labels the design
does not cover (or queues that do not combine) fall back to the unweighted figures and say why."""

from __future__ import annotations

import random

import pytest
from tests.support.oracles import cohen_kappa_score

from aieval.core import ReviewLabel
from aieval.judges import Judged, ReviewDesign, agreement, certify, select_items
from aieval.store import ReviewWeight

RUN = "r"


def _labels(humans: dict[str, bool], judge: str = "j") -> list[ReviewLabel]:
    return [
        ReviewLabel(judge, RUN, sid, "ana", passed=h, labelled_at=1.0) for sid, h in humans.items()
    ]


def _simulated_run(seed: int, n: int = 3000) -> tuple[list[float], list[bool], list[bool]]:
    """Judge scores, human verdicts and judge verdicts of a run where the judge is sure (and
    right) far from the threshold and a coin toss near it."""
    rng = random.Random(seed)
    scores = [rng.random() for _ in range(n)]
    human = [rng.random() < (0.02 if s < 0.35 else 0.98 if s > 0.65 else 0.5) for s in scores]
    return scores, human, [s >= 0.5 for s in scores]


def test_a_stratified_queue_gives_the_runs_kappa_where_the_labelled_items_do_not() -> None:
    scores, human, judged = _simulated_run(seed=0)
    true = cohen_kappa_score(human, judged)  # the judge's agreement over the whole run, 0.665
    run = [Judged(RUN, f"s{i}", s) for i, s in enumerate(scores)]
    picks = select_items(run, 300, seed=0)  # the default mix: most labels near the threshold
    labels = _labels({p.sample_id: human[int(p.sample_id[1:])] for p in picks})
    verdicts = {(RUN, f"s{i}"): j for i, j in enumerate(judged)}
    weights = {(RUN, p.sample_id): ReviewWeight(p.stratum, p.weight) for p in picks}
    design = [ReviewDesign("q1", (RUN,), weights)]

    weighted = agreement(labels, verdicts, design=design)
    plain = agreement(labels, verdicts)
    assert weighted.weighted and weighted.unweighted is None
    assert not plain.weighted and plain.unweighted == "no review design given"
    # weighted: within 0.06 of the run's kappa, which its interval holds; the labelled items'
    # own kappa (0.61) is off by more than 0.05, since they over-represent the hard items
    kappa = weighted.judge_human
    assert abs(kappa.estimate - true) < 0.06 and kappa.low <= true <= kappa.high
    assert abs(plain.judge_human.estimate - true) > max(0.05, abs(kappa.estimate - true))
    assert weighted.items == plain.items == 300  # counts are the labels', never weighted
    assert weighted.human_human == plain.human_human
    assert weighted.to_dict()["weighted"] is True


def _small() -> tuple[list[ReviewLabel], dict[tuple[str, str], bool]]:
    humans = {f"s{i}": (i % 3 != 0) for i in range(30)}
    verdicts = {(RUN, f"s{i}"): (i % 2 == 0) != (i % 7 == 0) for i in range(40)}
    return _labels(humans), verdicts


def test_equal_weights_give_exactly_the_unweighted_figures() -> None:
    labels, verdicts = _small()
    plain = agreement(labels, verdicts)
    for weight in (None, 4.0):
        stratum = {(RUN, f"s{i}"): ReviewWeight("ab"[i % 2], weight) for i in range(40)}
        equal = agreement(labels, verdicts, design=[ReviewDesign("q", (RUN,), stratum)])
        assert equal.weighted
        same = {k: v for k, v in equal.to_dict().items() if k not in ("weighted", "unweighted")}
        assert same == {k: v for k, v in plain.to_dict().items() if k in same}
        assert same["judge_human_kappa"] == plain.to_dict()["judge_human_kappa"]


def test_labels_outside_the_design_fall_back_to_unweighted_and_say_why() -> None:
    labels, verdicts = _small()
    plain = agreement(labels, verdicts)
    part = {(RUN, f"s{i}"): ReviewWeight("ab"[i % 2], 1.0 + i % 2) for i in range(20)}
    result = agreement(labels, verdicts, design=[ReviewDesign("q", (RUN,), part)])
    assert not result.weighted and result.judge_human == plain.judge_human
    assert result.unweighted is not None
    assert "10 labelled item(s) are in no review queue of this judge" in result.unweighted
    cert = certify(labels, verdicts, design=[ReviewDesign("q", (RUN,), part)], min_labels=1)
    assert "(unweighted: 10 labelled item(s) are in no review queue" in cert.reason
    assert cert.reason.startswith("kappa ")
    none = agreement(labels, verdicts, design=[])
    assert not none.weighted and none.unweighted == (
        "the judge has no review queue, so its labels have no design weight"
    )


def test_queues_over_one_run_do_not_combine_and_queues_over_disjoint_runs_do() -> None:
    labels, verdicts = _small()
    full = {(RUN, f"s{i}"): ReviewWeight("ab"[i % 2], 1.0 + i % 2) for i in range(30)}
    first = {k: w for k, w in full.items() if int(k[1][1:]) < 15}
    second = {k: w for k, w in full.items() if int(k[1][1:]) >= 15}
    both = [ReviewDesign("q1", (RUN,), first), ReviewDesign("q2", (RUN,), second)]
    result = agreement(labels, verdicts, design=both)
    assert not result.weighted
    assert result.unweighted == (
        f"queues q1 and q2 both drew from run {RUN}; queues of one judge combine only over "
        "disjoint runs"
    )
    overlap = [ReviewDesign("q1", (RUN,), full), ReviewDesign("q2", (RUN,), first)]
    assert "overlapping designs do not combine" in str(
        agreement(labels, verdicts, design=overlap).unweighted
    )
    # the same items as two runs, one queue each: the strata are kept apart and combine
    split = _labels({f"s{i}": (i % 3 != 0) for i in range(15)}) + [
        ReviewLabel("j", "r2", f"s{i}", "ana", passed=i % 3 != 0, labelled_at=1.0)
        for i in range(15, 30)
    ]
    verdicts2 = {**verdicts, **{("r2", k[1]): v for k, v in verdicts.items()}}
    moved = {("r2", k[1]): w for k, w in second.items()}
    apart = [ReviewDesign("q1", (RUN,), first), ReviewDesign("q2", ("r2",), moved)]
    combined = agreement(split, verdicts2, design=apart)
    alone = agreement(labels, verdicts, design=[ReviewDesign("q", (RUN,), full)])
    assert combined.weighted and alone.weighted
    # every item is labelled, so both estimates are the runs' own; the interval of four
    # strata (two per queue, kept apart) is not that of two
    assert combined.judge_human.estimate == pytest.approx(alone.judge_human.estimate)
    assert combined.judge_human.low != pytest.approx(alone.judge_human.low)
    cert = certify(split, verdicts2, design=apart, min_labels=1)
    assert cert.reason.startswith("weighted kappa ")


def test_a_stratum_without_a_labelled_item_falls_back() -> None:
    labels, verdicts = _small()
    weights = {(RUN, f"s{i}"): ReviewWeight("ab"[i % 2], 1.0 + i % 2) for i in range(30)}
    weights[(RUN, "s35")] = ReviewWeight("c", 9.0)
    result = agreement(labels, verdicts, design=[ReviewDesign("q", (RUN,), weights)])
    assert not result.weighted
    assert (
        result.unweighted is not None and "stratum q/c holds no labelled item" in result.unweighted
    )
