"""The comparison rule and ``aieval judges`` weight a judge's labels by its review queue's
design, read from the store, and say so; a label outside every queue makes them unweighted with
the reason."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from tests.report.test_judge_policy import (
    CORRECTING,
    KEY,
    _compare,
    _corrected,
    _labels,
    _rule,
    _write,
)
from tests.support.cli import run_main

from aieval.store import NewReviewQueue, Store

# the first 40 samples drawn: 20 near the threshold (each stands for itself), 20 far from it
# (each stands for 4 samples); the reviewer disagrees with the judge only near the threshold
NEAR, FAR = range(20), range(20, 40)
DISAGREE = {1, 4, 7, 10, 13}


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        _write(opened, "base")
        _write(opened, "cand")
        items = [("base", f"ex{i}", "near", 1.0) for i in NEAR]
        items += [("base", f"ex{i}", "far", 4.0) for i in FAR]
        opened.create_review_queue(NewReviewQueue("q", KEY, ("base",), tuple(items)))
        opened.add_review_labels(_labels("base", range(40), DISAGREE, at=10.0))
        yield opened


def test_the_rule_weights_the_labels_by_the_queue_and_says_so(store: Store) -> None:
    rule = _rule(_compare(store))
    [judge] = rule["details"]["judges"]
    assert judge["weighted"] is True and judge["unweighted"] is None
    assert "weighted kappa" in rule["reason"] and judge["n"] == 40
    # the disagreements sit in the stratum that stands for fewer samples: the weighted kappa is
    # above the labelled items' own 0.75
    assert judge["kappa"] > 0.8
    # a label on a sample no queue drew: unweighted, with the reason in the rule's sentence
    store.add_review_labels(_labels("base", range(50, 51), set(), at=11.0))
    rule = _rule(_compare(store))
    [judge] = rule["details"]["judges"]
    assert judge["weighted"] is False
    assert "(unweighted: 1 labelled item(s) are in no review queue of this judge" in rule["reason"]
    assert judge["kappa"] == pytest.approx(0.76, abs=0.02)


def test_judges_shows_whether_its_figures_are_weighted(
    store: Store, store_location: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    args = ["judges", "base", "--db", store_location]
    done = run_main(capsys, monkeypatch, *args, "--json")
    assert done.returncode == 0, done.stderr
    [payload] = json.loads(done.stdout)
    agree = payload["certification"]["agreement"]
    assert agree["weighted"] is True and agree["unweighted"] is None and agree["items"] == 40
    text = run_main(capsys, monkeypatch, *args)
    assert text.returncode == 0, text.stderr
    assert "weighted kappa judge-human" in text.stdout
    assert "weighted by the review queues' design" in text.stdout
    assert "with weighted TPR/TNR, n=120" in text.stdout


def test_the_corrected_rule_takes_the_weighted_tpr_and_tnr_as_judges_does(
    store: Store, store_location: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    rule = _corrected(_compare(store, CORRECTING))
    [judge] = rule["details"]["judges"]
    assert judge["weighted"] is True and judge["unweighted"] is None
    assert "weighted TPR/TNR" in rule["reason"]
    done = run_main(capsys, monkeypatch, "judges", "base", "--db", store_location, "--json")
    [payload] = json.loads(done.stdout)
    agree = payload["certification"]["agreement"]
    [run] = payload["runs"]
    # one function gives both: the rule's rates are the command's, and the weighted ones
    for key in ("tpr", "tnr", "corrected", "low", "high", "weighted"):
        assert judge["baseline"][key] == run["corrected"][key]
    assert judge["baseline"]["tpr"] == agree["tpr"]["estimate"]
    assert judge["baseline"]["tpr"] != pytest.approx(agree["true_pos"] / agree["positives"])
    # a label outside every queue: the counts, and the reason in the rule's sentence
    store.add_review_labels(_labels("base", range(50, 51), set(), at=11.0))
    rule = _corrected(_compare(store, CORRECTING))
    [judge] = rule["details"]["judges"]
    assert judge["weighted"] is False and judge["baseline"]["weighted"] is False
    assert "(unweighted: 1 labelled item(s) are in no review queue" in rule["reason"]
