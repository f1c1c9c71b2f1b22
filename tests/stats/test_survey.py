"""Agreement weighted back from a stratified sample: plain kappa with equal weights, the
population's figures when every item is labelled, and intervals that cover at nominal rate."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from tests.support.oracles import cohen_kappa_score

from aieval.errors import ConfigError
from aieval.stats import cohen_kappa, stratum_sizes, weighted_agreement


def _pairs(n: int, seed: int) -> tuple[list[bool], list[bool]]:
    rng = random.Random(seed)
    human = [rng.random() < 0.4 for _ in range(n)]
    judge = [h if rng.random() < 0.85 else not h for h in human]
    return judge, human


def test_equal_weights_give_cohens_kappa_and_the_plain_rates() -> None:
    judge, human = _pairs(300, 1)
    found = weighted_agreement(judge, human)
    assert found.kappa.estimate == pytest.approx(cohen_kappa_score(judge, human), abs=1e-12)
    assert found.kappa.low < found.kappa.estimate < found.kappa.high
    passes = [j for j, h in zip(judge, human, strict=True) if h]
    fails = [not j for j, h in zip(judge, human, strict=True) if not h]
    assert found.tpr is not None and found.tnr is not None
    assert found.tpr.estimate == pytest.approx(sum(passes) / len(passes))
    assert found.tnr.estimate == pytest.approx(sum(fails) / len(fails))
    assert (found.labels, found.strata) == (300, 1)
    # two strata sampled in proportion to their sizes are the same simple estimate
    strata = ["a" if i % 3 else "b" for i in range(300)]
    same = weighted_agreement(judge, human, strata, {"a": 200.0, "b": 100.0})
    assert same.kappa.estimate == pytest.approx(found.kappa.estimate)


def test_every_item_labelled_gives_the_populations_kappa_with_no_uncertainty() -> None:
    judge, human = _pairs(200, 2)
    strata = ["near" if i < 50 else "far" for i in range(200)]
    found = weighted_agreement(judge, human, strata, {"near": 50.0, "far": 150.0})
    assert found.kappa.estimate == pytest.approx(cohen_kappa(judge, human))
    assert found.kappa.low == pytest.approx(found.kappa.estimate)
    assert found.kappa.high == pytest.approx(found.kappa.estimate)


def _population(n: int, seed: int) -> tuple[list[float], list[bool]]:
    """A calibrated judge: the human passes with the judge's score, errors near 0.5."""
    rng = random.Random(seed)
    scores = [rng.betavariate(0.4, 0.4) for _ in range(n)]
    return scores, [rng.random() < s for s in scores]


def test_an_oversampled_stratum_is_weighted_back_and_the_interval_covers() -> None:
    scores, human = _population(3000, 3)
    judge = [s >= 0.5 for s in scores]
    truth = cohen_kappa(judge, human)
    tpr = sum(j and h for j, h in zip(judge, human, strict=True)) / sum(human)
    tnr = sum(not j and not h for j, h in zip(judge, human, strict=True)) / (3000 - sum(human))
    bands = ["near" if 0.3 <= s < 0.7 else ("low" if s < 0.5 else "high") for s in scores]
    members = {b: [i for i, x in enumerate(bands) if x == b] for b in ("near", "low", "high")}
    sizes = {b: float(len(m)) for b, m in members.items()}
    want = {"near": 120, "low": 40, "high": 40}  # the judge's unsure band, three times its share
    rng = random.Random(4)
    covered, hits, plain, reps = 0, Counter[str](), [], 300
    for _ in range(reps):
        picked = [(b, i) for b, m in members.items() for i in rng.sample(m, want[b])]
        j = [judge[i] for _, i in picked]
        h = [human[i] for _, i in picked]
        found = weighted_agreement(j, h, [b for b, _ in picked], sizes)
        covered += found.kappa.low <= truth <= found.kappa.high
        assert found.tpr is not None and found.tnr is not None
        hits["tpr"] += found.tpr.low <= tpr <= found.tpr.high
        hits["tnr"] += found.tnr.low <= tnr <= found.tnr.high
        plain.append(cohen_kappa(j, h))
    assert covered / reps >= 0.93
    # TPR's and TNR's intervals too (300 queues: 0.90 is three standard errors below 0.95)
    assert hits["tpr"] / reps >= 0.90 and hits["tnr"] / reps >= 0.90
    # the unweighted kappa of the same labels is the unsure band's, far below the run's
    assert sum(plain) / reps < truth - 0.1


def test_a_stratum_without_a_label_or_a_size_is_refused() -> None:
    judge, human = _pairs(10, 5)
    with pytest.raises(ConfigError, match="strata gone have no label"):
        weighted_agreement(judge, human, ["a"] * 10, {"a": 20.0, "gone": 5.0})
    with pytest.raises(ConfigError, match=r"stratum 'a' has 10 labels but a size of 5\.0"):
        weighted_agreement(judge, human, ["a"] * 10, {"a": 5.0})
    with pytest.raises(ConfigError, match="one of each per label"):
        weighted_agreement(judge, human[:3])
    assert stratum_sizes([("a", 2.5), ("a", 2.5), ("b", None)]) == {"a": 5.0, "b": 1.0}


def test_a_stratified_example_worked_by_hand() -> None:
    # judge-pass strata A (100 items; labels: 3 human passes, 1 fail) and C (50; 2 passes),
    # judge-fail stratum B (300; 4 fails). Shares 2/9, 1/9, 2/3, so the cells are
    # (pass, pass) 2/9 * 3/4 + 1/9 = 5/18, (pass, fail) 1/18, (fail, pass) 0, (fail, fail) 12/18:
    # po = 17/18, J = 1/3, H = 5/18, pe = 31/54, kappa = (17/18 - 31/54) / (23/54) = 20/23
    judge = [True] * 6 + [False] * 4
    human = [True, True, True, False, True, True, False, False, False, False]
    strata = ["A"] * 4 + ["C"] * 2 + ["B"] * 4
    found = weighted_agreement(judge, human, strata, {"A": 100.0, "C": 50.0, "B": 300.0})
    assert found.kappa.estimate == pytest.approx(20 / 23)
    assert found.tpr is not None and found.tpr.estimate == pytest.approx(1.0)
    assert found.tnr is not None and found.tnr.estimate == pytest.approx(12 / 13)
    assert found.base_rate == pytest.approx(5 / 18) and (found.labels, found.strata) == (10, 3)
    # kappa moves by (1 - pe - (2J - 1)(1 - po)) / (1 - pe)^2 = 1296/529 per unit of a
    # judge-pass stratum's human pass rate, by 1188/529 of a judge-fail one's. Its variance
    # shares half a label per verdict by the strata's labels: A 4/6 of the pass labels (1/3 of
    # a label on each side: q = 5/7, 2/7), C 2/6 (1/6: q = 13/14, 1/14), B all fails (1/2:
    # q = 1/10, 9/10); each q(1 - q) times m / (m - 1), times share^2, the finite population
    # correction and the influence^2, over m
    variance = (
        (2 / 9) ** 2 * (1 - 4 / 100) * (1296 / 529) ** 2 * (10 / 49 * 4 / 3) / 4
        + (1 / 9) ** 2 * (1 - 2 / 50) * (1296 / 529) ** 2 * (13 / 196 * 2) / 2
        + (2 / 3) ** 2 * (1 - 4 / 300) * (1188 / 529) ** 2 * (9 / 100 * 4 / 3) / 4
    )
    z = 1.959963984540054
    assert found.kappa.low == pytest.approx(20 / 23 - z * variance**0.5)
    assert found.kappa.high == pytest.approx(min(1.0, 20 / 23 + z * variance**0.5))
    # TNR = p(fail, fail) / (p(fail, fail) + p(pass, fail)) keeps half a label per stratum:
    # the (pass, fail) cell's variance is A's 0.3 * 0.7 * 4/3 and C's 1/6 * 5/6 * 2,
    # the (fail, fail) cell's B's 0.1 * 0.9 * 4/3
    fail_pass = (2 / 9) ** 2 * (1 - 4 / 100) * (0.21 * 4 / 3) / 4 + (1 / 9) ** 2 * (1 - 2 / 50) * (
        5 / 36 * 2
    ) / 2
    fail_fail = (2 / 3) ** 2 * (1 - 4 / 300) * (0.09 * 4 / 3) / 4
    total = 13 / 18
    tnr_se = ((12 / 18 / total**2) ** 2 * fail_pass + (1 / 18 / total**2) ** 2 * fail_fail) ** 0.5
    assert found.tnr.low == pytest.approx(12 / 13 - z * tnr_se)
