"""Two windows of online scoring (as the engine stores them: different traces) compared as
independent samples: no pairing by id, no coverage rule, the pass rate's Newcombe interval and
each mean's Welch interval, the method said in every format, and no promotion decision."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from scipy import stats
from tests.support.online import T0, add_trace, put_rule, scored_rule, trace_ids

from aieval import Store
from aieval.online import OnlineWorker, window_run_name
from aieval.report import (
    compare_runs,
    comparison_schema,
    render_github,
    render_html,
    render_json,
    render_markdown,
    render_text,
)
from aieval.report._compare_windows import _metrics
from aieval.report._samples import ExampleNumbers
from aieval.stats import newcombe_interval, welch_interval
from aieval.store import window_run_id

HOUR = 3600.0
LABEL = "independent samples (online windows: different traces)"


def scored_windows(store: Store, location: str) -> tuple[str, str]:
    """Two hours of the rule ``support``: 4 traces in the first, 3 others in the second."""
    put_rule(store, scored_rule(settle_s=0))
    for trace_id in trace_ids(4):
        add_trace(store, trace_id, T0 + 1)
    for trace_id in trace_ids(3, start=4):
        add_trace(store, trace_id, T0 + HOUR + 1)
    worker = OnlineWorker(location, "w")
    worker.examine(T0 + HOUR + 2)
    while worker.work_once(T0 + HOUR + 3):
        pass
    worker.close()
    return window_run_id("support", T0), window_run_id("support", T0 + HOUR)


def test_two_windows_are_independent_samples_without_a_decision(store_location: str) -> None:
    store = Store(store_location)
    base, cand = scored_windows(store, store_location)
    comparison = compare_runs(store, base, cand)
    assert comparison.method == LABEL and comparison.paired == 0
    assert comparison.only_baseline_count == 4 and comparison.only_candidate_count == 3
    assert comparison.outcome == "inconclusive" and comparison.decision.exit_code == 3
    assert [r.rule for r in comparison.decision.rules] == ["independent_windows"]
    assert comparison.regressions == [] and comparison.unchanged == 0
    rows = {m["name"]: m for m in comparison.metrics}
    samples = {
        side: [s.passed for s in store.iter_samples(run, predictions=False)]
        for side, run in (("b", base), ("c", cand))
    }
    rate = rows["pass_rate"]
    ci = newcombe_interval(sum(samples["b"]), 4, sum(samples["c"]), 3)
    assert (rate["low"], rate["high"]) == pytest.approx((ci.low, ci.high))
    assert rate["method"].startswith("Newcombe") and rate["n_baseline"] == 4
    data = comparison.to_dict()
    assert data["method"] == LABEL
    jsonschema.validate(json.loads(render_json(comparison)), comparison_schema())
    for text in (
        render_text(comparison, width=200),
        render_markdown(comparison),
        render_html(comparison),
        render_github(comparison),
    ):
        assert LABEL in text and "no promotion decision" in text
        assert "candidate_coverage" not in text
    store.close()


def test_windows_sharing_most_traces_are_still_paired(store_location: str) -> None:
    # two rules scoring the same traces: their windows hold the same examples
    store = Store(store_location)
    put_rule(store, scored_rule(settle_s=0))
    put_rule(store, scored_rule("support-b", settle_s=0))
    for trace_id in trace_ids(4):
        add_trace(store, trace_id, T0 + 1)
    worker = OnlineWorker(store_location, "w")
    worker.examine(T0 + 2)
    while worker.work_once(T0 + 3):
        pass
    worker.close()
    comparison = compare_runs(store, window_run_id("support", T0), window_run_id("support-b", T0))
    assert comparison.method is None and comparison.paired == 4
    assert "method" not in comparison.to_dict()
    store.close()


def test_the_cli_compares_windows_by_name(tmp_path: Path) -> None:
    location = str(tmp_path / "runs.db")
    store = Store(location)
    scored_windows(store, location)
    store.close()
    names = [window_run_name("support", T0 + h * HOUR, "hour") for h in (0, 1)]
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "compare", *names, "--db", location, "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    data = json.loads(done.stdout)
    assert data["method"] == LABEL and data["decision"]["summary"].startswith("no promotion")


def test_the_intervals_are_newcombes_and_welchs() -> None:
    # Newcombe (1998), Statistics in Medicine 17: 873-890, table II, 56/70 vs 48/80, method 10
    ci = newcombe_interval(48, 80, 56, 70)
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0524, 0.3339)
    a, b = [0.1, 0.5, 0.7, 0.9, 0.3], [0.2, 0.9, 0.8, 0.95, 0.99, 0.6]
    found = welch_interval(a, b)
    assert found is not None
    expected = stats.ttest_ind(b, a, equal_var=False).confidence_interval()
    assert (found.low, found.high) == pytest.approx((expected.low, expected.high))
    assert welch_interval([1.0], b) is None


def _windows_metrics(
    base: list[float], cand: list[float], figure: str = "weighted_score"
) -> dict[str, Any]:
    def numbers(values: list[float], side: str) -> list[ExampleNumbers]:
        if figure == "weighted_score":
            return [ExampleNumbers(f"{side}{i}", weighted_score=v) for i, v in enumerate(values)]
        return [ExampleNumbers(f"{side}{i}", scores={figure: v}) for i, v in enumerate(values)]

    rows = {m["name"]: m for m in _metrics(numbers(base, "b"), numbers(cand, "c"), 0.95)}
    return rows[figure]


def test_a_weighted_score_interval_is_in_points() -> None:
    # all zero: a proportion of 0/100 points, its interval in points (not a rate's)
    row = _windows_metrics([0.0] * 10, [0.0] * 12)
    ci = newcombe_interval(0, 10, 0, 12)
    assert (row["low"], row["high"]) == pytest.approx((100 * ci.low, 100 * ci.high))
    row = _windows_metrics([0.0, 100.0, 100.0], [100.0, 0.0, 0.0, 0.0])
    ci = newcombe_interval(2, 3, 1, 4)
    assert (row["low"], row["high"]) == pytest.approx((100 * ci.low, 100 * ci.high))
    assert row["method"].startswith("Newcombe")
    # 0 and 1 points out of 100 are small scores, not a proportion
    row = _windows_metrics([0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0])
    assert row["method"].startswith("Welch")
    found = welch_interval([0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0])
    assert found is not None and (row["low"], row["high"]) == (found.low, found.high)


@pytest.mark.parametrize(
    ("figure", "scale", "base", "cand"),
    [
        ("weighted_score", 100.0, [0.0, 0.0], [100.0, 50.0]),
        ("exact", 1.0, [0.0, 0.5], [1.0, 0.5]),
    ],
)
def test_an_interval_never_passes_the_possible_range(
    figure: str, scale: float, base: list[float], cand: list[float]
) -> None:
    found = welch_interval(base, cand)
    assert found is not None and found.low < -scale and found.high > scale  # t's, unbounded
    row = _windows_metrics(base, cand, figure)
    assert (row["low"], row["high"]) == (-scale, scale)
    assert row["method"] == "Welch t interval (independent samples, clipped to the possible range)"


def test_a_window_still_open_is_said_partial_in_every_format(store_location: str) -> None:
    store = Store(store_location)
    base, cand = scored_windows(store, store_location)
    assert store.get_run(cand).status == "running"  # the current hour: not closed yet
    comparison = compare_runs(store, base, cand)
    warning = "is still open (its run is running): its figures are partial"
    assert any(warning in w for w in comparison.decision.warnings)
    for text in (
        render_text(comparison, width=300),
        render_markdown(comparison),
        render_html(comparison),
        render_github(comparison),
        render_json(comparison),
    ):
        assert warning in text
    store.close()
