"""Comparisons of runs of plain verdicts are computed from columns, with the record path's
numbers to the last digit.

The golden fixture (judges, target errors, n/a and unscored samples, rows' own checks on one
side, changed inputs and answer keys, unpaired examples, epochs, scorer weights) is compared both
ways on each backend, and so are small stores made for the edge cases: a scorer only the
candidate has, runs in two stores, every example equal, one example, no samples at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.report.golden.fixture import PAIRS

from aieval._records import SampleRecord, ScoreRecord
from aieval.core._threshold import threshold_verdict
from aieval.report import compare_runs
from aieval.store import Store

PLAIN = [PAIRS["ungraded"], PAIRS["epochs"]]


@pytest.fixture
def golden(golden_copy: str) -> Iterator[Store]:
    built = Store(golden_copy)
    try:
        yield built
    finally:
        built.close()


def _compare(store: Store, base: str, cand: str, **options: Any) -> Any:
    data = compare_runs(store, base, cand, n_resamples=200, **options).to_dict()
    return json.loads(json.dumps(data, sort_keys=True))


def _both_ways(
    store: Store, monkeypatch: pytest.MonkeyPatch, base: str, cand: str, **options: Any
) -> tuple[Any, Any]:
    """The comparison from columns, and the same by the record path."""
    assert store.plain_run(base) and store.plain_run(cand)
    fast = _compare(store, base, cand, **options)
    with monkeypatch.context() as patch:
        patch.setattr(Store, "plain_run", lambda self, run: False)
        slow = _compare(store, base, cand, **options)
    return fast, slow


def test_plain_runs_compare_with_the_record_paths_numbers(
    golden: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for base, cand in PLAIN:
        for max_examples in (40, None):
            fast, slow = _both_ways(golden, monkeypatch, base, cand, max_examples=max_examples)
            assert fast == slow, (base, max_examples)
        rules = {r["rule"]: r for r in fast["decision"]["rules"]}
        details = rules["comparable_runs"]["details"]
        assert details["changed_inputs"] and details["changed_expected"]
        assert fast["only_baseline_count"] and fast["only_candidate_count"]
        assert fast["regressions_count"] and fast["improvements_count"]
        assert len(fast["metrics"]) > 2


def test_a_baseline_in_another_store_compares_the_same(
    golden: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for base, cand in PLAIN:
        with Store(str(tmp_path / f"{base}.db")) as other:
            other.import_run(golden.get_run(base), golden.stored_samples(base))
            fast = _compare(golden, base, cand, baseline_store=other)
            assert fast == _compare(golden, base, cand), base
            with monkeypatch.context() as patch:
                patch.setattr(Store, "plain_run", lambda self, run: False)
                assert fast == _compare(golden, base, cand, baseline_store=other), base


def _run(
    store: Store,
    run_id: str,
    rows: list[dict[str, Any]],
    *,
    epochs: int = 1,
    weights: dict[str, float] | None = None,
) -> None:
    store.create_run(name=run_id, config={"epochs": epochs}, run_id=run_id)
    samples = []
    for i, row in enumerate(rows):
        for epoch in range(1, epochs + 1) if epochs > 1 else [None]:
            sample = SampleRecord(
                id=row["id"] if epoch is None else f"{row['id']}#{epoch}",
                index=i,
                input=row.get("input", {"q": row["id"]}),
                expected=row.get("expected", "yes"),
                scores={name: ScoreRecord(value) for name, value in row.get("scores", {}).items()},
                error=row.get("error"),
                latency_s=row.get("latency"),
                cost=row.get("cost"),
                input_tokens=row.get("input_tokens"),
                epoch=epoch,
            )
            sample.verdict = threshold_verdict(sample, 0.5, weights=weights)
            sample.passed = sample.verdict.passed
            samples.append(sample)
    store.record_samples(run_id, samples)
    store.finish_run(run_id, status="completed", metrics={"samples": len(samples)})


def _rows(n: int, shift: float = 0.0, **extra: dict[str, float]) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        scores = {"f1": min(1.0, (i % 7) / 6 + shift), "exact": float(i % 3 == 0)}
        scores.update({name: values.get(f"ex{i}", 0.5) for name, values in extra.items()})
        rows.append({"id": f"ex{i}", "scores": scores, "latency": 0.1 * (i % 5), "cost": 0.001})
    return rows


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def test_a_scorer_only_the_candidate_has_is_left_out_alike(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(store, "base", _rows(60), weights={"f1": 2.0})
    cand = _rows(60, 0.1, judge={f"ex{i}": 0.25 * (i % 5) for i in range(60)})
    cand[3]["error"] = "TimeoutError"
    cand[4]["input"] = {"q": "another"}
    cand[5]["input"] = {"q": "ex5"}  # the same value: not a change
    cand[9]["scores"]["row:contains-a"] = 1.0  # a row's own check on one side only
    cand[10]["scores"]["row:contains-a"] = 0.0
    _run(store, "cand", [*cand[2:], {"id": "new", "scores": {"f1": 1.0}}], weights={"f1": 2.0})
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    assert any("adds scorers" in w for w in fast["warnings"])
    assert any("2 paired example(s) carry a row's own check" in w for w in fast["warnings"])
    assert fast["only_baseline"] == ["ex0", "ex1"] and fast["only_candidate"] == ["new"]
    rules = {r["rule"]: r for r in fast["decision"]["rules"]}
    assert rules["comparable_runs"]["details"]["changed_input_ids"] == ["ex4"]


def test_epochs_with_a_changed_input_and_uneven_answers(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(store, "base", _rows(30), epochs=3)
    cand = _rows(30, -0.2)
    cand[7]["input"] = {"q": "edited"}
    cand[8]["error"] = "ValueError: bad"
    _run(store, "cand", cand, epochs=2)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand", max_examples=5)
    assert fast == slow
    assert fast["regressions_count"] > 5 and len(fast["regressions"]) == 5


@pytest.mark.parametrize("n", [1, 25])
def test_every_example_equal(store: Store, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    _run(store, "base", _rows(n))
    _run(store, "cand", _rows(n))
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    assert fast["paired"] == n and fast["unchanged"] == n and not fast["regressions"]


def test_runs_without_samples(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(store, "base", [])
    _run(store, "cand", _rows(3))
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    assert fast["paired"] == 0 and fast["decision"]["outcome"] == "inconclusive"


def test_score_rows_read_in_pages_compare_the_same(
    golden: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, cand = PAIRS["epochs"]
    whole = _compare(golden, base, cand)
    monkeypatch.setattr("aieval.store._pair_reads._PAGE", 97)
    assert _compare(golden, base, cand) == whole


def test_a_scorer_only_the_baseline_has_leaves_examples_unscored_alike(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(store, "base", _rows(40, old={f"ex{i}": 0.9 for i in range(0, 40, 3)}))  # 0.5 elsewhere
    cand = _rows(40, 0.05)
    cand[6]["scores"]["f1"] = None  # a failed scorer: no value where the baseline had one
    _run(store, "cand", cand)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    rules = {r["rule"]: r for r in fast["decision"]["rules"]}
    assert rules["candidate_coverage"]["details"]["unscored"] == 40
    assert any(m["name"] == "old" and m["candidate_missing"] == 40 for m in fast["metrics"])


@pytest.mark.parametrize("epochs", [1, 2])
def test_a_cost_some_example_spent_without_pricing_does_not_rank_the_runs(
    store: Store, monkeypatch: pytest.MonkeyPatch, epochs: int
) -> None:
    # equal on every rule before the cost; the baseline's known costs sum lower, but one of its
    # examples spent tokens at no known cost: its total is unknown, so the cost does not rank
    base = _rows(30)
    base[0] |= {"cost": None, "input_tokens": 10}
    cand = [row | {"cost": 0.002} for row in _rows(30)]
    _run(store, "base", base, epochs=epochs)
    _run(store, "cand", cand, epochs=epochs)
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    assert fast["tie_break"]["rule"] == "tie" and fast["tie_break"]["winner"] is None
    # the same example without tokens spent nothing: the costs are known and rank
    store._write("UPDATE samples SET input_tokens = NULL WHERE run_id = ?", ("base",))
    # a row changed in place is not seen by the columns the run kept (only a count is checked)
    store._write("DELETE FROM run_columns WHERE run_id = ?", ("base",))
    fast, slow = _both_ways(store, monkeypatch, "base", "cand")
    assert fast == slow
    assert fast["tie_break"]["rule"] == "cost" and fast["tie_break"]["winner"] == "baseline"
