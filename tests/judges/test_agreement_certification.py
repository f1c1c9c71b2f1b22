"""Certifying a judge: certified, uncertified (with the labels to settle it), drifting."""

import numpy as np
import pytest

from aieval.core import ReviewLabel
from aieval.errors import ConfigError
from aieval.judges import Certificate, CertificationStatus, certify, labels_to_settle
from aieval.stats import kappa_interval


def labelled(
    tp: int, fn: int, tn: int, fp: int, *, at: float = 1.0, prefix: str = "l"
) -> tuple[list[ReviewLabel], dict[tuple[str, str], bool]]:
    labels, verdicts = [], {}
    cells = [(True, True, tp), (True, False, fn), (False, False, tn), (False, True, fp)]
    for human, judge, count in cells:
        for _ in range(count):
            sid = f"{prefix}{len(labels)}"
            labels.append(ReviewLabel("j", "r", sid, "ana", passed=human, labelled_at=at))
            verdicts[("r", sid)] = judge
    return labels, verdicts


def test_a_judge_agreeing_on_enough_labels_is_certified_with_a_certificate() -> None:
    labels, verdicts = labelled(tp=70, fn=3, tn=74, fp=3)  # kappa 0.92 on 150 items
    result = certify(labels, verdicts, now=1234.0)
    assert result.status is CertificationStatus.CERTIFIED
    assert result.certificate is not None
    assert result.certificate.n == 150 and result.certificate.certified_at == 1234.0
    assert result.certificate.bound == result.agreement.judge_human.low >= 0.6
    assert result.labels_needed is None
    assert result.to_dict()["status"] == "certified"


def test_good_agreement_on_too_few_labels_is_uncertified_with_the_labels_needed() -> None:
    labels, verdicts = labelled(tp=19, fn=1, tn=19, fp=1)  # kappa 0.9, bound above 0.6, n 40
    result = certify(labels, verdicts)
    assert result.agreement.judge_human.low >= 0.6
    assert result.status is CertificationStatus.UNCERTIFIED
    assert result.labels_needed == 60  # up to judge_min_labels
    assert "60 more labelled item(s)" in result.reason


def test_a_bound_of_045_is_uncertified_and_the_labels_named_settle_it() -> None:
    # 60 items at kappa 0.7: bound about 0.52. The estimate says how many more items at this
    # agreement lift the bound to the floor; build that many with the same shares and check.
    labels, verdicts = labelled(tp=26, fn=4, tn=25, fp=5)
    result = certify(labels, verdicts, min_labels=0)
    kappa = result.agreement.judge_human
    assert kappa.low < 0.6 < kappa.estimate
    assert result.status is CertificationStatus.UNCERTIFIED
    needed = result.labels_needed
    assert needed is not None and needed > 0
    scale = (60 + needed) / 60
    cells = np.round(np.array([26, 4, 25, 5]) * scale).astype(int)
    human = [True] * int(cells[0] + cells[1]) + [False] * int(cells[2] + cells[3])
    judge = [True] * int(cells[0]) + [False] * int(cells[1] + cells[2]) + [True] * int(cells[3])
    assert kappa_interval(human, judge).low == pytest.approx(0.6, abs=0.01)


def test_an_estimate_below_the_floor_cannot_be_settled_by_more_labels() -> None:
    labels, verdicts = labelled(tp=60, fn=40, tn=60, fp=40)  # kappa 0.2
    result = certify(labels, verdicts)
    assert result.status is CertificationStatus.UNCERTIFIED
    assert result.labels_needed is None
    assert "will not certify it" in result.reason
    assert labels_to_settle(0.5, 0.4, 100, 0.6, 100) is None


def test_newer_labels_that_put_the_bound_below_the_floor_make_a_certified_judge_drifting() -> None:
    old, verdicts = labelled(tp=70, fn=3, tn=74, fp=3, at=10.0)
    first = certify(old, verdicts, now=20.0)
    assert first.certificate is not None
    new, more = labelled(tp=30, fn=40, tn=30, fp=40, at=30.0, prefix="n")
    result = certify(old + new, {**verdicts, **more}, certificate=first.certificate)
    assert result.status is CertificationStatus.DRIFTING
    assert result.newer == 140
    assert result.certificate == first.certificate
    assert "140 label(s) newer than its certificate" in result.reason
    # Newer labels that agree keep the certificate.
    good, agreeing = labelled(tp=10, fn=0, tn=10, fp=0, at=30.0, prefix="g")
    held = certify(old + good, {**verdicts, **agreeing}, certificate=first.certificate)
    assert held.status is CertificationStatus.CERTIFIED and held.certificate == first.certificate


def test_a_certificate_without_newer_labels_is_not_drifting_whatever_the_data() -> None:
    labels, verdicts = labelled(tp=30, fn=20, tn=30, fp=20, at=5.0)
    cert = Certificate("j", 100, 0.8, 0.7, 0.6, certified_at=10.0)
    result = certify(labels, verdicts, certificate=cert)
    assert result.status is CertificationStatus.UNCERTIFIED
    assert result.newer == 0


def test_policy_values_out_of_range_are_refused() -> None:
    labels, verdicts = labelled(tp=5, fn=0, tn=5, fp=0)
    with pytest.raises(ConfigError, match="judge_kappa_floor"):
        certify(labels, verdicts, floor=1.5)
    with pytest.raises(ConfigError, match="judge_min_labels"):
        certify(labels, verdicts, min_labels=-1)


def test_an_estimate_a_hair_above_the_floor_names_no_absurd_label_count() -> None:
    # 60 items at kappa 0.6000001 against the floor 0.6 would need ~1e14 more items: no count.
    assert labels_to_settle(0.6000001, 0.4, 60, 0.6, 100) is None
    assert labels_to_settle(0.7, 0.5, 60, 0.6, 100) == 180


def test_a_kappa_just_above_the_floor_says_labels_will_not_settle_it_soon() -> None:
    # 213 items at kappa 0.601 (bound 0.52): some 270,000 more items: no count, a statement
    assert labels_to_settle(0.601, 0.52, 213, 0.6, 100) is None
    # more than fifty times the items held (and min_labels) is past the bound too
    assert labels_to_settle(0.61, 0.5, 100, 0.6, 100) is None  # 12,000 more
    assert labels_to_settle(0.65, 0.5, 100, 0.6, 100) == 800
    assert labels_to_settle(0.7, 0.5, 100, 0.6, 100) == 300
    labels, verdicts = labelled(tp=40, fn=12, tn=40, fp=12)
    result = certify(labels, verdicts, floor=0.535)  # kappa 0.538: a hair above
    assert result.status is CertificationStatus.UNCERTIFIED and result.labels_needed is None
    assert "too close to the floor 0.535 for more labels to settle it soon" in result.reason
    assert result.to_dict()["labels_needed"] is None
