"""A sample's pass threshold is a floor met exactly: a score equal to it up to float rounding
passes, in the run and in its stored report (which lists no "below the pass threshold")."""

from __future__ import annotations

from pathlib import Path

from aieval import run, scorer
from aieval.report import build_report
from aieval.store import Store

TEN_TENTHS = sum([0.1] * 10) / 10  # 0.09999999999999999, a mean of ten 0.1 scores


@scorer(name="mean_of_tenths")
def mean_of_tenths(example: object, output: object) -> float:
    """A scorer that averages ten sub-scores of 0.1, as many composite scorers do."""
    return sum([0.1] * 10) / 10


@scorer(name="just_under")
def just_under(example: object, output: object) -> float:
    return 0.0999


def test_the_0_1_pass_threshold_is_met_by_a_mean_of_ten_0_1_scores(tmp_path: Path) -> None:
    rows = [{"id": f"r{i}", "prompt": "?", "expected": "a", "prediction": "a"} for i in range(3)]
    db = tmp_path / "runs.db"
    met = run(name="met", dataset=rows, scorers=[mean_of_tenths], store=db, pass_threshold=0.1)
    assert [s.passed for s in met.samples] == [True, True, True]
    under = run(name="under", dataset=rows, scorers=[just_under], store=db, pass_threshold=0.1)
    assert [s.passed for s in under.samples] == [False, False, False]
    store = Store(db)
    reasons = build_report(store, met.id).to_dict()["failure_reasons"]
    assert [r for r in reasons if r["kind"] == "threshold"] == []
    reasons = build_report(store, under.id).to_dict()["failure_reasons"]
    assert [r["count"] for r in reasons if r["kind"] == "threshold"] == [3]
