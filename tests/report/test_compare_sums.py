"""Comparisons of two plain runs of one store from sums in the database equal the column
path's (the same closed-form methods) within float rounding: 1e-9 relative on floats, exactly
otherwise, on each backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.report.golden.fixture import PAIRS
from tests.report.test_compare_columns import _rows, _run
from tests.support.close import differences

import aieval.report._compare as compare_module
from aieval.report import compare_runs
from aieval.store import Store


def _both_ways(
    store: Store, monkeypatch: pytest.MonkeyPatch, base: str, cand: str, **options: Any
) -> tuple[Any, Any]:
    """The comparison from sums (checked to be taken), and the same from columns."""
    taken: list[bool] = []
    real = compare_module.sums_parts

    def spy(*args: Any, **kwargs: Any) -> Any:
        parts = real(*args, **kwargs)
        taken.append(parts is not None)
        return parts

    options = {"n_resamples": 200, "bootstrap_max_n": 3, **options}
    with monkeypatch.context() as patch:
        patch.setattr(compare_module, "sums_parts", spy)
        fast = json.loads(json.dumps(compare_runs(store, base, cand, **options).to_dict()))
    assert taken == [True]
    with monkeypatch.context() as patch:
        patch.setattr(compare_module, "sums_parts", lambda *a, **k: None)
        slow = json.loads(json.dumps(compare_runs(store, base, cand, **options).to_dict()))
    return fast, slow


@pytest.fixture(autouse=True)
def _from_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small runs take the sums path too (it is taken from SUMS_FROM_PAIRS pairs on)."""
    import aieval.report._compare_sums as compare_sums

    monkeypatch.setattr(compare_sums, "SUMS_FROM_PAIRS", 0)
    # the columns the runs kept as they were written are read before the sums: not here
    monkeypatch.setattr(compare_module, "kept_parts", lambda *a, **k: None)


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def test_the_golden_plain_runs_compare_alike(golden_copy: str, monkeypatch: Any) -> None:
    """Judges, target errors, unscored samples, changed inputs and answer keys, unpaired
    examples."""
    base, cand = PAIRS["ungraded"]
    with Store(golden_copy) as golden:
        for max_examples in (3, None):
            fast, slow = _both_ways(golden, monkeypatch, base, cand, max_examples=max_examples)
            assert differences(fast, slow) == []
        assert fast["only_baseline_count"] and fast["only_candidate_count"]
        assert fast["regressions_count"] and fast["improvements_count"]
        assert {m["method"] for m in fast["metrics"]} >= {"paired t interval"}


def test_runs_with_unpaired_and_unscored_examples_compare_alike(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows_b = _rows(60)
    rows_c = _rows(70, shift=0.1)[5:]
    for row in rows_c[:4]:  # the candidate left a scorer unscored
        row["scores"]["exact"] = None
    rows_c[10]["error"] = "boom"
    _run(store, "base", rows_b)
    _run(store, "cand", rows_c)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand", max_examples=5)
    assert differences(fast, slow) == []
    rules = {r["rule"]: r for r in fast["decision"]["rules"]}
    assert rules["candidate_coverage"]["details"]["unscored"] == 4
    assert fast["only_baseline_count"] == 5 and fast["only_candidate_count"] == 10


def test_pass_fail_scores_take_the_paired_proportion_test_alike(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"id": f"ex{i}", "scores": {"exact": float(i % 3 == 0)}} for i in range(80)]
    better = [{"id": f"ex{i}", "scores": {"exact": float(i % 2 == 0)}} for i in range(80)]
    _run(store, "base", rows)
    _run(store, "cand", better)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert differences(fast, slow) == []
    methods = {m["name"]: m["method"] for m in fast["metrics"]}
    assert methods["weighted_score"] == "paired-proportion score test"


def test_below_the_limit_the_values_are_read(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer paired examples than ``bootstrap_max_n``: the bootstrap, from the values."""
    _run(store, "base", _rows(20))
    _run(store, "cand", _rows(20, shift=0.1))
    parts = compare_module.sums_parts
    seen: list[Any] = []
    monkeypatch.setattr(
        compare_module, "sums_parts", lambda *a, **k: seen.append(parts(*a, **k)) or seen[-1]
    )
    result = compare_runs(store, "base", "cand", n_resamples=200).to_dict()
    assert seen == [None]
    assert result["metrics"][2]["method"] == "paired percentile bootstrap"
