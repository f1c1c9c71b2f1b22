"""The metrics table shows the decision's own interval for the decision's metrics, and every
interval names its method, in JSON and in every format."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.reports import decision_rule, store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.report import (
    compare_runs,
    render_github,
    render_html,
    render_markdown,
    render_text,
)
from aieval.store import Store

N = 80


def _run(store: Store, passed: list[bool]) -> str:
    return store_run(store, [
        SampleRecord(
            id=f"e{i}", index=i, input=f"q{i}", prediction="p", expected="gold",
            passed=ok, scores={"exact": ScoreRecord(1.0 if ok else 0.0)},
        )
        for i, ok in enumerate(passed)
    ])  # fmt: skip


@pytest.fixture
def comparison(store: Store) -> Any:
    # a 0/1 metric with few discordant pairs: the rule's Tango bounds and a percentile
    # bootstrap of the same delta differ visibly (6 wins, 1 loss)
    base = _run(store, [i % 2 == 0 or i < 6 for i in range(N)])
    cand = _run(store, [i % 2 == 0 or (i < 12 and i != 1) for i in range(N)])
    return compare_runs(store, base, cand)


def test_the_decision_metric_row_carries_the_rules_bounds(comparison: Any) -> None:
    rule = decision_rule(comparison, "weighted_score_noninferior").details
    assert rule["method"] == "paired-proportion score test"
    rows = {m["name"]: m for m in comparison.to_dict()["metrics"]}
    score = rows["weighted_score"]
    assert (score["low"], score["high"]) == (rule["lower_bound"], rule["upper_bound"])
    assert score["delta"] == pytest.approx(rule["mean_delta"])
    assert score["method"] == rule["method"] and score["one_sided"] is True
    assert score["confidence"] == pytest.approx(0.95)
    passing = decision_rule(comparison, "pass_rate_not_worse").details
    assert rows["pass_rate"]["high"] == pytest.approx(passing["upper_bound"] / 100)
    assert rows["pass_rate"]["method"] == "paired-proportion score test"
    other = rows["exact"]
    assert other["method"] == "paired percentile bootstrap" and other["one_sided"] is False


def _flat(text: str) -> str:
    return " ".join(text.replace("\\", "").split())


@pytest.mark.parametrize(
    ("render", "said"),
    [
        pytest.param(
            lambda c: render_text(c, width=200),
            ["Tango score", "bootstrap", "intervals: weighted_score, pass_rate: the decision's "
             "one-sided 95% bounds; the others: 95% CI"],
            id="text",
        ),
        pytest.param(render_html, ["one-sided 95% bounds, paired-proportion score test",
                                   "95% CI, paired percentile bootstrap"], id="html"),
        pytest.param(render_markdown, ["one-sided 95% bounds, paired-proportion score test",
                                       "95% CI, paired percentile bootstrap"], id="markdown"),
        pytest.param(render_github, ["one-sided 95% bounds, paired-proportion score test",
                                     "95% CI, paired percentile bootstrap"], id="github"),
    ],
)  # fmt: skip
def test_every_format_names_each_intervals_method(
    comparison: Any, render: Any, said: list[str]
) -> None:
    out = _flat(render(comparison))
    rule = decision_rule(comparison, "weighted_score_noninferior").details
    bounds = f"[{rule['lower_bound']:+.2f}, {rule['upper_bound']:+.2f}]"
    assert out.count(bounds) >= 1
    for text in said:
        assert text in out, text
    assert "paired 95% CI" not in out
