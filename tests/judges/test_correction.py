"""A run's pass rate under a judge, corrected with the TPR and TNR its reviewers measured."""

from dataclasses import replace

import pytest

from aieval.core import ReviewLabel
from aieval.errors import ConfigError
from aieval.judges import agreement, corrected_pass_rate
from aieval.stats import rogan_gladen


def labelled(tp: int, fn: int, tn: int, fp: int) -> tuple[list[ReviewLabel], dict]:
    """Labels and judge verdicts with the given confusion counts (human rows, judge columns)."""
    labels, verdicts = [], {}
    cells = [(True, True, tp), (True, False, fn), (False, False, tn), (False, True, fp)]
    for human, judge, count in cells:
        for _ in range(count):
            sid = f"l{len(labels)}"
            labels.append(ReviewLabel("j", "cal", sid, "ana", passed=human))
            verdicts[("cal", sid)] = judge
    return labels, verdicts


def test_the_corrected_rate_uses_the_reviewers_tpr_and_tnr() -> None:
    labels, cal = labelled(tp=45, fn=5, tn=30, fp=20)
    agree = agreement(labels, cal)
    run = {("run", f"s{i}"): i < 84 for i in range(100)}
    rate = corrected_pass_rate(run, agree)
    plain = rogan_gladen(84, 100, true_pos=45, positives=50, true_neg=30, negatives=50)
    assert replace(rate, unweighted=None) == plain
    assert not rate.weighted and rate.unweighted == "no review design given"
    assert rate.corrected == pytest.approx((0.84 + 0.6 - 1) / (0.9 + 0.6 - 1))


def test_a_chance_judge_is_refused_naming_it() -> None:
    labels, cal = labelled(tp=10, fn=10, tn=10, fp=10)
    with pytest.raises(ConfigError, match=r"judge j: .*no better than chance"):
        corrected_pass_rate({("run", "s"): True}, agreement(labels, cal))
