"""Per-tool figures of a run, worked out by hand on four samples: calls, expected, matched,
precision and recall per tool (Wilson), argument and tool errors, forbidden hits, the
confusion matrix with its (none) row and column, recovery; the less-called tools folded into
"other" and said so; a malformed stored trajectory counted as unreadable, never dropped; a
run without trajectories has no ``tools`` key at all."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.support.reports import store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import TRAJECTORY_KEY, ToolMatch, ToolUse, Trajectory
from aieval.report import build_report
from aieval.report._tool_figures import ToolTally
from aieval.report._tool_results import ToolFigures
from aieval.report._tool_section import PROBE_SAMPLES
from aieval.stats import wilson_interval
from aieval.store import Store

U, M = ToolUse, ToolMatch

#: (trajectory, passed): the four hand-worked samples
SAMPLES = [
    # search matched; book's arguments differ (an argument error, no match)
    (Trajectory(
        (U("search", {"q": "a"}), U("book", {"x": "y"})),
        (U("search", {"q": "a"}), U("book", {"x": "x"})),
        (M(0, 0, True), M(1, 1, False)),
    ), True),
    # search expected, lookup called (a substitution); book matched but failed; sample failed
    (Trajectory(
        (U("lookup"), U("book", error="timeout")),
        (U("search"), U("book")),
        (M(0, 0, None), M(1, 1, True)),
    ), False),
    # an extra search that failed, book matched, an extra call of the forbidden delete;
    # the sample still passed: it recovered
    (Trajectory(
        (U("search", error="500"), U("book"), U("delete")),
        (U("book"),),
        (M(None, 0), M(0, 1, True), M(None, 2)),
        forbidden=("delete",),
    ), True),
    # search called with arguments that are not JSON: an argument error, no match
    (Trajectory(
        (U("search", argument_error="not JSON"),),
        (U("search"),),
        (M(0, 0, False),),
    ), True),
]  # fmt: skip


def trajectory_sample(i: int, metadata: Any, passed: bool, scorer: str = "tools") -> SampleRecord:
    """A sample whose scorer ``scorer`` stored ``metadata`` (a trajectory, or not)."""
    return SampleRecord(
        id=f"s{i}",
        index=i,
        input="q",
        prediction="a",
        passed=passed,
        scores={scorer: ScoreRecord(1.0 if passed else 0.0, metadata=metadata)},
    )


def hand_worked_run(store: Store, extra: Sequence[SampleRecord] = ()) -> str:
    samples = [
        trajectory_sample(i, {TRAJECTORY_KEY: t.to_dict()}, passed)
        for i, (t, passed) in enumerate(SAMPLES)
    ]
    return store_run(store, [*samples, *extra])


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def _row(figures: ToolFigures, name: str) -> dict[str, Any]:
    return next(r.to_dict() for r in figures.tools if r.name == name)


def _counts(row: dict[str, Any]) -> tuple[int, ...]:
    keys = ("calls", "expected", "matched", "argument_errors", "tool_errors", "forbidden_hits")
    return tuple(row[k] for k in keys)


def test_per_tool_figures_and_confusion_matrix_worked_by_hand(store: Store) -> None:
    broken = trajectory_sample(9, {TRAJECTORY_KEY: {"called": "not a list"}}, True)
    report = build_report(store, hand_worked_run(store, [broken]), n_resamples=50)
    (figures,) = report.tools
    assert (figures.scorer, figures.samples, figures.calls, figures.expected) == ("tools", 4, 8, 6)
    assert figures.matched == 3
    # calls, expected, matched, argument errors, tool errors, forbidden hits
    assert _counts(_row(figures, "book")) == (3, 3, 2, 1, 1, 0)
    assert _counts(_row(figures, "search")) == (3, 3, 1, 1, 1, 0)
    assert _counts(_row(figures, "delete")) == (1, 0, 0, 0, 0, 1)
    assert _counts(_row(figures, "lookup")) == (1, 0, 0, 0, 0, 0)
    # the most called first, ties by calls expected, then by name
    assert [r.name for r in figures.tools] == ["book", "search", "delete", "lookup"]
    search = _row(figures, "search")
    ci = wilson_interval(1, 3, confidence=0.95)
    assert search["precision"] == {
        "estimate": 1 / 3, "low": ci.low, "high": ci.high, "successes": 1, "n": 3,
    }  # fmt: skip
    assert (search["recall"]["successes"], search["recall"]["n"]) == (1, 3)
    assert _row(figures, "lookup")["recall"]["estimate"] is None  # never expected
    # recovery: book failed in s1 (failed), search in s2 (passed)
    book = _row(figures, "book")["recovery"]
    assert (book["successes"], book["n"]) == (0, 1)
    assert _row(figures, "search")["recovery"]["estimate"] == 1.0
    assert (figures.recovery.successes, figures.recovery.n) == (1, 2)
    assert figures.confusion.labels == ("book", "search", "delete", "lookup", "(none)")
    assert figures.confusion.counts == (
        (3, 0, 0, 0, 0),  # book expected: called book each time
        (0, 2, 0, 1, 0),  # search expected: search twice, lookup once (a substitution)
        (0, 0, 0, 0, 0),
        (0, 0, 0, 0, 0),
        (0, 1, 1, 0, 0),  # extra calls: search and delete
    )
    # the malformed trajectory is counted and named, never silently dropped
    assert figures.unreadable == 1
    assert figures.unreadable_samples[0].sample_id == "s9"
    assert "trajectory.called: expected a list" in figures.unreadable_samples[0].reason
    data = report.to_dict()["tools"]
    assert ToolFigures.from_dict(json.loads(json.dumps(data))[0]) == figures


def test_less_called_tools_are_summed_in_other_and_said_so() -> None:
    tally = ToolTally("tools")
    for i, (trajectory, passed) in enumerate(SAMPLES):
        tally.add(f"s{i}", {TRAJECTORY_KEY: trajectory.to_dict()}, passed)
    figures = tally.figures(0.95, max_tools=2)
    assert [r.name for r in figures.tools] == ["book", "search"]
    assert figures.other is not None and figures.other_tools == 2
    other = figures.other.to_dict()
    assert other["name"] is None
    assert (other["calls"], other["expected"], other["forbidden_hits"]) == (2, 0, 1)
    assert figures.confusion.labels == ("book", "search", "(other)", "(none)")
    assert figures.confusion.counts == (
        (3, 0, 0, 0),
        (0, 2, 1, 0),  # the substitution by lookup lands in the (other) column
        (0, 0, 0, 0),
        (0, 1, 1, 0),  # the extra delete too
    )
    # the totals still cover every tool
    assert (figures.calls, figures.expected, figures.matched) == (8, 6, 3)


def test_a_sample_with_failed_calls_of_two_folded_tools_counts_once_in_other() -> None:
    failing = Trajectory((U("a", error="x"), U("b", error="y"), U("c"), U("c")))
    tally = ToolTally("tools")
    tally.add("s0", {TRAJECTORY_KEY: failing.to_dict()}, True)
    figures = tally.figures(0.95, max_tools=1)
    assert [r.name for r in figures.tools] == ["c"]
    assert figures.other is not None
    assert (figures.other.recovery.successes, figures.other.recovery.n) == (1, 1)


def test_calls_without_a_stored_pairing_are_extra_and_missing_in_the_matrix() -> None:
    tally = ToolTally("tools")
    unpaired = Trajectory((U("search"), U("search")), (U("book"),))
    tally.add("s0", {TRAJECTORY_KEY: unpaired.to_dict()}, True)
    figures = tally.figures(0.95)
    assert figures.confusion.labels == ("search", "book", "(none)")
    assert figures.confusion.counts == ((0, 0, 0), (0, 0, 1), (2, 0, 0))
    assert (figures.calls, figures.expected, figures.matched) == (2, 1, 0)


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ('{"trajectory": ', "not JSON"),
        ({"trajectory": None}, "expected an object"),
        ({"trajectory": {"called": [{"name": ""}]}}, "expected a tool name"),
        ({"trajectory": {"called": [{"name": "a"}], "matches": [{"expected": 3}]}}, "pair"),
        ({"trajectory": {"called": [], "shape": 1}}, "unknown field 'shape'"),
    ],
)
def test_a_malformed_trajectory_is_counted_unreadable_with_why(metadata: Any, why: str) -> None:
    tally = ToolTally("tools")
    tally.add("bad", metadata, True)
    tally.add("good", {TRAJECTORY_KEY: SAMPLES[0][0].to_dict()}, True)
    figures = tally.figures(0.95)
    assert (figures.samples, figures.unreadable) == (1, 1)
    assert why in figures.unreadable_samples[0].reason
    assert figures.calls == 2  # the readable sample is counted whatever the other held


def test_a_run_without_trajectories_has_no_tools_key(tmp_path: Path) -> None:
    with Store(str(tmp_path / "runs.db")) as store:
        # the key's name in other text (a judge's reason) is no trajectory
        samples = [
            trajectory_sample(0, {"reason": 'the "trajectory" looked fine'}, True),
            trajectory_sample(1, {}, False),
        ]
        report = build_report(store, store_run(store, samples), n_resamples=50)
    assert report.tools == ()
    assert "tools" not in report.to_dict()


def _padded_run(store: Store, late: list[SampleRecord]) -> str:
    """More plain samples than the look at a run's first samples covers, then ``late``."""
    early = [trajectory_sample(i, {}, True, scorer="exact") for i in range(PROBE_SAMPLES + 2)]
    for record in early:
        record.scores["tools"] = ScoreRecord(None, error="the tool server was down")
    return store_run(store, [*early, *late])


def test_trajectories_after_the_first_samples_are_read(tmp_path: Path) -> None:
    # the trajectory scorer failed on every sample looked at first: the scores are all read
    late = trajectory_sample(99, {TRAJECTORY_KEY: SAMPLES[0][0].to_dict()}, True)
    late.scores["exact"] = ScoreRecord(1.0)
    with Store(str(tmp_path / "runs.db")) as store:
        (figures,) = build_report(store, _padded_run(store, [late]), n_resamples=50).tools
    assert (figures.samples, figures.calls) == (1, 2)


def test_a_scorer_first_seen_late_is_read(tmp_path: Path) -> None:
    # a dataset row's own check scores only the rows that carry it, maybe none of the first
    late = trajectory_sample(99, {TRAJECTORY_KEY: SAMPLES[0][0].to_dict()}, True, "row:tools")
    with Store(str(tmp_path / "runs.db")) as store:
        plain = [trajectory_sample(i, {}, True, scorer="exact") for i in range(PROBE_SAMPLES + 2)]
        (figures,) = build_report(store, store_run(store, [*plain, late]), n_resamples=50).tools
    assert figures.scorer == "row:tools" and figures.samples == 1


def test_a_run_without_trajectories_reads_none_of_its_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("every score read for a run without trajectories")

    with Store(str(tmp_path / "runs.db")) as store:
        plain = [trajectory_sample(i, {}, i % 3 > 0, scorer="exact") for i in range(80)]
        run_id = store_run(store, plain)
        monkeypatch.setattr(store, "trajectory_scores", refuse)
        assert "tools" not in build_report(store, run_id, n_resamples=50).to_dict()
