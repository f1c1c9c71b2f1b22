"""Agreement of a judge with its reviewers on pass/fail, checked against scikit-learn."""

import json
from pathlib import Path

import pytest
from tests.support.oracles import cohen_kappa_score, confusion_matrix

from aieval.core import ReviewLabel, SampleRecord, ScoreRecord
from aieval.errors import ConfigError, ReviewError
from aieval.judges import agreement, judge_verdicts, read_review_labels
from aieval.stats import fleiss_kappa, wilson_interval

J = "a1b2c3d4e5f60718"


def lab(sample: str, reviewer: str, passed: bool | None = None, **kw: object) -> ReviewLabel:
    return ReviewLabel(J, "run1", sample, reviewer, passed=passed, **kw)  # type: ignore[arg-type]


def test_judge_human_figures_match_sklearn_on_the_majority_reference() -> None:
    judge = [True, True, False, True, False, False, True, True, False, True, True, False]
    human = [True, False, False, True, True, False, True, True, False, True, False, False]
    verdicts = {("run1", f"s{i}"): v for i, v in enumerate(judge)}
    labels = [lab(f"s{i}", "ana", h) for i, h in enumerate(human)]
    result = agreement(labels, verdicts)
    assert result.judge_human.estimate == pytest.approx(cohen_kappa_score(human, judge))
    tn, fp, fn, tp = confusion_matrix(human, judge, labels=[False, True]).ravel()
    assert (result.true_pos, result.positives) == (tp, tp + fn)
    assert (result.true_neg, result.negatives) == (tn, tn + fp)
    assert result.tpr == wilson_interval(int(tp), int(tp + fn))
    assert result.tnr == wilson_interval(int(tn), int(tn + fp))
    assert result.base_rate == pytest.approx(sum(human) / len(human))
    assert result.items == len(human) and result.labels == len(human)
    assert result.human_human is None and result.human_human_items == 0


def test_several_reviewers_majority_ties_relabels_scores_and_strays_are_counted() -> None:
    verdicts = {("run1", s): v for s, v in {"a": True, "b": False, "c": True, "d": False}.items()}
    labels = [
        lab("a", "ana", True),
        lab("a", "bo", True),
        lab("a", "cy", False),  # a: 2 of 3 pass -> pass
        lab("b", "ana", True),
        lab("b", "bo", False),  # b: tie -> left out, counted
        lab("c", "ana", False, labelled_at=1.0),
        lab("c", "ana", True, labelled_at=2.0),  # c: the latest label of ana counts
        lab("d", "bo", score=0.3),  # d: a score below the threshold is a fail
        lab("zz", "bo", True),  # a sample the judge did not grade
        ReviewLabel("other-judge", "run1", "a", "bo", passed=False),  # another judge's label
    ]
    result = agreement(labels, verdicts, judge=J)
    assert (result.items, result.ties, result.unmatched) == (3, 1, 1)
    assert result.labels == 7 and result.reviewers == 3
    assert (result.true_pos, result.positives, result.true_neg, result.negatives) == (2, 2, 1, 1)
    assert result.base_rate == pytest.approx(2 / 3)
    # Items a and b have two or more reviewers: Fleiss over their pass/fail counts.
    assert result.human_human_items == 2
    assert result.human_human is not None
    assert result.human_human.estimate == pytest.approx(fleiss_kappa([(2, 1), (1, 1)]))
    with pytest.raises(ConfigError, match="2 judges"):
        agreement(labels, verdicts)


def test_human_human_kappa_of_two_reviewers_with_an_interval() -> None:
    verdicts = {("run1", f"s{i}"): i % 2 == 0 for i in range(40)}
    labels = []
    for i in range(40):
        truth = i % 3 != 0
        labels += [lab(f"s{i}", "ana", truth), lab(f"s{i}", "bo", truth if i % 7 else not truth)]
    result = agreement(labels, verdicts)
    assert result.human_human is not None
    counts = [
        (sum(p), 2 - sum(p))
        for p in (
            (truth, truth if i % 7 else not truth)
            for i, truth in ((i, i % 3 != 0) for i in range(40))
        )
    ]
    assert result.human_human.estimate == pytest.approx(fleiss_kappa(counts))
    assert result.human_human.low < result.human_human.estimate < result.human_human.high
    again = agreement(labels, verdicts)
    assert again.human_human == result.human_human  # seeded


def test_no_usable_label_is_a_typed_error_saying_what_is_missing() -> None:
    with pytest.raises(ConfigError, match="1 on samples no run of the judge graded, 0 tied"):
        agreement([lab("x", "ana", True)], {("run1", "s"): True})
    with pytest.raises(ConfigError, match="judge other: no labels"):
        agreement([lab("x", "ana", True)], {("run1", "x"): True}, judge="other")


def test_judge_verdicts_binarize_at_the_threshold_and_fail_unreadable() -> None:
    def sample(sid: str, value: float | None, unreadable: str | None = None) -> SampleRecord:
        return SampleRecord(
            id=sid, index=0, input="q", scores={"judge": ScoreRecord(value, unreadable=unreadable)}
        )

    samples = [
        sample("a", 0.7),
        sample("b", 0.69),
        sample("c", 0.9, "malformed"),
        sample("d", None),
    ]
    got = judge_verdicts(samples, "judge", run_id="r", threshold=0.7)
    assert got == {("r", "a"): True, ("r", "b"): False, ("r", "c"): False}


def test_review_labels_read_from_jsonl_and_errors_name_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    rows = [
        {"judge": J, "run_id": "r", "sample_id": "s1", "reviewer": "ana", "passed": True},
        {"judge": J, "run_id": "r", "sample_id": "s2", "reviewer": "bo", "score": 0.25,
         "note": "vague", "labelled_at": 1700000000},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    got = read_review_labels(path, now=1.8e9)
    assert got[0] == ReviewLabel(J, "r", "s1", "ana", passed=True, labelled_at=1.8e9)
    assert got[1] == ReviewLabel(J, "r", "s2", "bo", score=0.25, note="vague", labelled_at=1.7e9)
    path.write_text(json.dumps({**rows[0], "passed": "yes"}) + "\n", encoding="utf-8")
    with pytest.raises(ReviewError, match=r"labels\.jsonl line 1: field 'passed'"):
        read_review_labels(path)
    path.write_text(json.dumps({**rows[0], "passed": None}) + "\n", encoding="utf-8")
    with pytest.raises(ReviewError, match=r"line 1: .*neither a pass/fail nor a score"):
        read_review_labels(path)
    path.write_text(json.dumps({**rows[0], "reviewer": ""}) + "\n", encoding="utf-8")
    with pytest.raises(ReviewError, match="field 'reviewer'"):
        read_review_labels(path)
