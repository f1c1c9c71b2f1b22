"""Per-tool figures in every format: JSON (valid against the published schemas, read back the
same), text, Markdown, HTML (tool names escaped: they come from models and datasets) and, in
comparisons, both runs side by side with the change in precision and recall per tool, compact
in the GitHub comment; a run without trajectories shows no tools section anywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from tests.report.test_tool_figures import SAMPLES, hand_worked_run, trajectory_sample
from tests.support.reports import store_run

from aieval.core import TRAJECTORY_KEY, ToolMatch, ToolUse, Trajectory
from aieval.report import (
    COMMENT_LIMIT,
    Comparison,
    RunReport,
    build_report,
    compare_runs,
    comparison_schema,
    render_github,
    render_html,
    render_json,
    render_markdown,
    render_text,
    report_schema,
)
from aieval.store import Store

HOSTILE = "<script>alert('x')</script>|**"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunReport, Comparison]]:
    """The hand-worked run (plus a sample calling a tool with a hostile name) as candidate,
    its first three samples as baseline."""
    hostile = Trajectory((ToolUse(HOSTILE),), (ToolUse("search"),), (ToolMatch(0, 0),))
    path = tmp_path_factory.mktemp("tools") / "runs.db"
    with Store(str(path)) as store:
        base = store_run(
            store,
            [
                trajectory_sample(i, {TRAJECTORY_KEY: t.to_dict()}, passed)
                for i, (t, passed) in enumerate(SAMPLES[:3])
            ],
        )
        cand = hand_worked_run(
            store, [trajectory_sample(7, {TRAJECTORY_KEY: hostile.to_dict()}, False)]
        )
        report = build_report(store, cand, n_resamples=50)
        comparison = compare_runs(store, base, cand, n_resamples=50)
    yield report, comparison


def test_json_is_valid_and_renders_as_the_report_does(runs: tuple[RunReport, Comparison]) -> None:
    report, comparison = runs
    stored = json.loads(render_json(report))
    jsonschema.Draft202012Validator(report_schema()).validate(stored)
    jsonschema.Draft202012Validator(comparison_schema()).validate(
        json.loads(render_json(comparison))
    )
    assert [f["scorer"] for f in stored["tools"]] == ["tools"]
    # stored JSON renders the same way as the fresh report
    assert render_markdown(stored) == render_markdown(report)
    assert render_html(stored) == render_html(report)
    compared = json.loads(render_json(comparison))
    assert render_markdown(compared) == render_markdown(comparison)
    assert render_github(compared) == render_github(comparison)


def test_text_shows_totals_per_tool_and_the_confusion_matrix(
    runs: tuple[RunReport, Comparison],
) -> None:
    text = render_text(runs[0], width=240)
    assert (
        "Tools · scorer tools · 5 samples with a trajectory · 9 calls, 7 expected, 3 matched"
        in (text)
    )
    assert "tool-error recovery 50.0% [9.5%, 90.5%] (1/2)" in text
    assert "Confusion: expected (rows) × called (columns)" in text
    assert "Per tool (precision: matched / calls; recall: matched / expected; Wilson)" in text
    assert HOSTILE in text  # the terminal shows the name as it is, never as markup


def test_a_narrow_terminals_confusion_blocks_are_rows_of_expected_tools(
    runs: tuple[RunReport, Comparison],
) -> None:
    text = render_text(runs[0], width=80)
    confusion = text[text.index("Confusion: expected (rows)") :]
    assert "expected \\ called" not in confusion  # a block is one row: never read as a column
    lines = [line.strip() for line in confusion.splitlines()]
    start = lines.index(next(line for line in lines if line.startswith("expected:")))
    assert lines[start].split() == ["expected:", "search"]
    assert lines[start + 1].startswith("called search:")  # the diagonal: the same tool
    wide = render_text(runs[0], width=400)
    assert "called book" in wide  # one head for both layouts


def test_markdown_and_html_escape_tool_names(runs: tuple[RunReport, Comparison]) -> None:
    report = runs[0]
    markdown = render_markdown(report)
    assert "**Tools** · scorer tools" in markdown
    assert "| book | 3 | 3 | 2 | 66.7% \\[20.8%, 93.9%\\] (2/3) |" in markdown
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown
    assert "\\|\\*\\*" in markdown  # a pipe in a name never breaks the table
    html = render_html(report)
    assert (
        "<h2>Tools</h2>" in html
        and "<h3>Confusion: expected (rows) × called (columns)</h3>" in html
    )
    assert "<script>alert" not in html
    assert '<th scope="col">&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;|**</th>' in html


def test_comparison_shows_both_runs_and_the_change_per_tool(
    runs: tuple[RunReport, Comparison],
) -> None:
    comparison = runs[1]
    assert comparison.tools is not None
    search = next(c for c in comparison.tools.changes if c.name == "search")
    assert search.baseline is not None and search.candidate is not None
    assert (search.baseline.matched, search.baseline.calls) == (1, 2)
    assert search.precision_change == pytest.approx(1 / 3 - 1 / 2)
    assert search.recall_change == pytest.approx(1 / 4 - 1 / 2)
    text = render_text(comparison, width=240)
    assert "Tools · baseline · 3 samples with a trajectory" in text
    assert "Per tool, baseline vs candidate" in text and "-16.7 pt" in text
    markdown = render_markdown(comparison)
    assert "| search | 2 → 3 | 50.0% (1/2) | 33.3% (1/3) | -16.7 pt |" in markdown
    html = render_html(comparison)
    assert "<h3>Per tool, baseline vs candidate</h3>" in html and "<script>alert" not in html
    assert "<details><summary>baseline · scorer tools · 3 samples with a trajectory" in html
    assert html.count("<h3>Confusion: expected (rows) × called (columns)</h3>") == 2
    comment = render_github(comparison)
    assert "**Tools** · baseline · 3 samples with a trajectory" in comment
    assert "<summary>Per tool, baseline vs candidate</summary>" in comment
    assert "[" not in comment.split("**Tools**")[1].split("<details>")[0]  # compact: no intervals
    assert "<script>alert" not in comment


def test_a_run_without_trajectories_shows_no_tools_anywhere(tmp_path: Path) -> None:
    with Store(str(tmp_path / "runs.db")) as store:
        plain = [trajectory_sample(i, {}, i % 2 == 0) for i in range(4)]
        base, cand = store_run(store, plain), store_run(store, plain)
        report = build_report(store, cand, n_resamples=50)
        comparison = compare_runs(store, base, cand, n_resamples=50)
    assert comparison.tools is None and "tools" not in comparison.to_dict()
    for doc in (report, comparison):
        shown = render_text(doc) + render_markdown(doc) + render_html(doc)
        assert "Tools" not in shown and "Per tool" not in shown
    assert "Tools" not in render_github(comparison)


def test_many_tools_are_bounded_in_every_format(tmp_path: Path) -> None:
    names = [f"tool_{i:02d}_" + "x" * 300 for i in range(25)]
    many = Trajectory(tuple(ToolUse(n) for n in names for _ in range(2)))
    sample = trajectory_sample(0, {TRAJECTORY_KEY: many.to_dict()}, True)
    with Store(str(tmp_path / "runs.db")) as store:
        base, cand = store_run(store, [sample]), store_run(store, [sample])
        report = build_report(store, cand, n_resamples=50)
        comparison = compare_runs(store, base, cand, n_resamples=50)
    (figures,) = report.tools
    assert (len(figures.tools), figures.other_tools, figures.calls) == (20, 5, 50)
    text = render_text(report, width=400)
    assert "(other: 5 tools)" in text and "5 less-called tools are summed" in text
    assert "(other: 5 / 5 tools)" in render_markdown(comparison)
    comment = render_github(comparison)
    assert len(comment) <= COMMENT_LIMIT
    assert "Per tool, baseline vs candidate (10 of 21 tools)" in comment
