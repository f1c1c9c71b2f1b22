"""How a stored sample becomes per-example numbers (the one place reports read samples)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aieval.report
from aieval._records import SampleRecord, ScoreRecord
from aieval.core._stored import adapt_record
from aieval.report import CriterionValue, ExampleNumbers, example_numbers


def stored(record: SampleRecord) -> SampleRecord:
    """``record`` as a store reads it back (a row without a verdict, of a run at 0.5)."""
    return adapt_record(record, 0.5)


values = st.one_of(st.none(), st.floats(0.0, 1.0))


@settings(max_examples=100, deadline=None)
@given(scores=st.dictionaries(st.text(min_size=1, max_size=5), values, max_size=6))
def test_ungraded_weighted_score_is_100_times_the_mean_of_scored_values(
    scores: dict[str, float | None],
) -> None:
    sample = SampleRecord(
        id="x", index=0, input="q", scores={k: ScoreRecord(v) for k, v in scores.items()}
    )
    ex = example_numbers(stored(sample))
    present = [v for v in scores.values() if v is not None]
    if present:
        assert ex.weighted_score == pytest.approx(100 * sum(present) / len(present))
    else:
        assert ex.weighted_score is None
    assert ex.graded is False and ex.promotion_score == ex.weighted_score


def test_target_error_scores_zero_and_keeps_its_error() -> None:
    ex = example_numbers(stored(SampleRecord(id="x", index=0, input="q", error="boom")))
    assert ex.weighted_score == 0.0 and ex.error == "boom" and ex.passed is False


criterion = st.fixed_dictionaries(
    {
        "normalized": st.floats(0.0, 1.0),
        "adjusted": st.one_of(st.none(), st.floats(0.0, 1.0)),
        "weight": st.floats(0.01, 5.0),
    }
)


@settings(max_examples=100, deadline=None)
@given(items=st.lists(criterion, min_size=1, max_size=6))
def test_promotion_score_is_the_weighted_mean_with_adjusted_in_place(
    items: list[dict[str, Any]],
) -> None:
    evaluation = {
        "weighted_score": 50.0,
        "grade": "D",
        "hard_gates": {"g": True},
        "criteria": [{"name": f"c{i}", **item} for i, item in enumerate(items)],
    }
    ex = example_numbers(
        stored(
            SampleRecord(id="x", index=0, input={}, passed=False, extra={"evaluation": evaluation})
        )
    )
    assert ex.graded and ex.grade == "D" and ex.gates == {"g": True}
    used = [(it["adjusted"] if it["adjusted"] is not None else it["normalized"]) for it in items]
    if all(it["adjusted"] is None for it in items):
        assert ex.promotion_score == 50.0
    else:
        weights = [it["weight"] for it in items]
        expected = 100 * sum(w * u for w, u in zip(weights, used, strict=True)) / sum(weights)
        assert ex.promotion_score == pytest.approx(expected)
        assert 100 * min(used) - 1e-9 <= (ex.promotion_score or 0) <= 100 * max(used) + 1e-9


def test_severe_failures_and_floor_violations() -> None:
    ex = ExampleNumbers(
        id="x",
        gates={"schema_contract_valid": False, "input_validation": False, "other": False},
        criteria={
            "safety": CriterionValue(0.5, floor=0.8, floor_passed=False),
            "correctness": CriterionValue(0.5, floor=0.7, floor_passed=False),
            "style": CriterionValue(0.1),
        },
    )
    assert ex.floor_violations() == {"safety", "correctness"}
    assert ex.severe(("schema_contract_valid",), ("safety", "validation")) == [
        "gate schema_contract_valid",
        "gate input_validation",
        "criterion safety below floor",
    ]
    assert ex.gate_failed


def test_report_exports_are_sorted_and_present() -> None:
    names = aieval.report.__all__
    assert names == sorted(names)
    assert {
        "build_report",
        "RunReport",
        "compare_runs",
        "Comparison",
        "PromotionPolicy",
        "PromotionDecision",
        "RuleResult",
        "decide_promotion",
    } <= set(names)
    assert all(hasattr(aieval.report, name) for name in names)


@pytest.mark.parametrize(
    "module",
    [
        "aieval.report",
        "aieval.report._samples",
        "aieval.report._policy",
        "aieval.report._policy_model",
        "aieval.report._document",
        "aieval.stats._paired",
        "aieval.stats._describe",
        "aieval.stats._bootstrap",
    ],
)
def test_doctests(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
