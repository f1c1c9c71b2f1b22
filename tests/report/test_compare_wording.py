"""A comparison's wording: the paired counts read as a sentence, a blocked decision shows no
tie-break, and a regression's p-value says what it tests."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from tests.report.golden.fixture import golden_path
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

RENDERERS = [
    pytest.param(lambda d: " ".join(render_text(d, width=400).split()), id="text"),
    pytest.param(render_html, id="html"),
    pytest.param(render_markdown, id="markdown"),
    pytest.param(render_github, id="github"),
]


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden_path().read_text(encoding="utf-8"))
    return data


def _flat(text: str) -> str:
    return text.replace("\\", "")


@pytest.mark.parametrize("render", RENDERERS)
def test_the_paired_counts_read_as_a_sentence(golden: dict[str, Any], render: Any) -> None:
    doc = copy.deepcopy(golden["compare:graded"])
    assert doc["paired"] == doc["scored_paired"] == 782
    out = _flat(render(doc))
    assert "782 examples paired by id, all scored in both" in out
    assert "scored in both examples" not in out
    doc = copy.deepcopy(golden["compare:epochs"])
    assert "782 examples paired by id, 766 scored in both" in _flat(render(doc))


@pytest.mark.parametrize("render", RENDERERS)
def test_a_blocked_decision_shows_no_tie_break(golden: dict[str, Any], render: Any) -> None:
    doc = copy.deepcopy(golden["compare:epochs"])
    assert doc["decision"]["outcome"] == "block" and doc["tie_break"]["winner"]
    assert "tie-break" not in _flat(render(doc)).lower()
    doc["decision"]["outcome"] = "inconclusive"
    assert "tie-break: baseline ranks first" in _flat(render(doc)).lower()


N = 80


def test_a_regression_says_what_its_p_value_tests(store: Store) -> None:
    def run(passed: list[bool]) -> str:
        return store_run(store, [
            SampleRecord(
                id=f"e{i}", index=i, input=f"q{i}", prediction="p", expected="gold",
                passed=ok, scores={"exact": ScoreRecord(1.0 if ok else 0.0)},
            )
            for i, ok in enumerate(passed)
        ])  # fmt: skip

    base = run([True] * N)
    cand = run([i % 2 == 0 for i in range(N)])
    rule = decision_rule(compare_runs(store, base, cand), "weighted_score_noninferior")
    assert rule.outcome == "fail" and rule.details["p_value"] > 0.99
    assert "(non-inferiority p=1, paired-proportion score test)" in rule.reason
    assert "worse than the margin allows, shown: even the upper bound" in rule.reason
    assert "no support to the candidate being within the margin" in rule.reason
