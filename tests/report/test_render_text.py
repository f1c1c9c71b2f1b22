from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from tests.support.reports import (
    HOSTILE_ID,
    blocking_comparison,
    graded_report,
    promoting_comparison,
    ungraded_report,
)

from aieval.errors import ConfigError
from aieval.report import render_text


def test_every_kind_renders_its_headline(document: dict[str, Any]) -> None:
    text = render_text(document)
    if document["kind"] == "report":
        assert f"pass rate {100 * document['pass_rate']['estimate']:.1f}%" in text
        for criterion in document["criteria"]:
            assert criterion["name"] in text
    else:
        assert document["decision"]["summary"] in text
        for rule in document["decision"]["rules"]:
            assert rule["rule"] in text


def test_graded_report_shows_every_section() -> None:
    doc = graded_report()
    text = render_text(doc, width=200)
    for gate in doc["gates"]:
        assert gate["name"] in text
    for grade, count in doc["grades"].items():
        assert grade in text and str(count) in text
    assert doc["judges"]["review_quality"]["warning"] in text
    assert "planner" in text and "by language" in text
    assert HOSTILE_ID in text  # shown literally: the terminal does not interpret markup


def test_ungraded_report_has_no_grade_or_gate_tables() -> None:
    text = render_text(ungraded_report())
    assert "grades" not in text and "gate failure rates" not in text
    assert "weighted score 61.20" in text


@pytest.mark.parametrize(
    ("doc", "mark"),
    [
        pytest.param(promoting_comparison(), "✔ promote:", id="promote"),
        pytest.param(blocking_comparison(), "✘ blocked:", id="block"),
    ],
)
def test_comparison_leads_with_the_decision(doc: dict[str, Any], mark: str) -> None:
    first = render_text(doc).splitlines()[0]
    assert first.startswith(mark)
    lines = render_text(doc, width=200).splitlines()
    for rule in doc["decision"]["rules"]:
        (line,) = [line for line in lines if f" {rule['rule']} " in line]
        assert ("FAIL" if not rule["passed"] else "pass") in line


def test_long_change_lists_point_to_the_diff_of_these_two_runs() -> None:
    doc = blocking_comparison()  # 13 regressions, more than the text shows
    text = render_text(doc, width=200)
    base, cand = doc["baseline"]["id"], doc["candidate"]["id"]
    assert f"every changed example: aieval diff {base} {cand} --limit 13" in text
    assert "every changed example" not in render_text(promoting_comparison(), width=200)


def test_names_that_look_like_markup_stay_literal() -> None:
    doc = graded_report()
    doc["gates"][0]["name"] = "[bold]gate[/bold] [/]"
    doc["criteria"][0]["name"] = "score[0]"
    doc["judges"] = {"[red]judge": doc["judges"]["review_quality"]}
    text = render_text(doc, width=200)
    assert "[bold]gate[/bold] [/]" in text and "score[0]" in text and "[red]judge" in text


def test_width_is_respected() -> None:
    text = render_text(graded_report(), width=90)
    assert max(len(line) for line in text.splitlines()) <= 90


def test_a_table_too_wide_for_the_width_prints_one_block_per_row() -> None:
    text = render_text(blocking_comparison(), width=60)
    assert max(len(line) for line in text.splitlines()) <= 60
    assert "…" not in text
    lines = [line.split() for line in text.splitlines()]
    # the metrics table cannot fit its numbers in 60 columns: each cell whole on its own line
    assert ["metric:", "weighted_score"] in lines
    assert ["interval:", "[-10.90,", "-3.80]"] in lines
    assert ["rule", "result", "reason"] in [[w for w in line if w not in "┃"] for line in lines]


def test_console_gets_colour_and_the_return_value_does_not() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor", width=120)
    plain = render_text(blocking_comparison(), console=console)
    assert "\x1b[" in buffer.getvalue()
    assert "\x1b[" not in plain


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"kind": "nope"}, id="unknown-kind"),
        pytest.param([1, 2], id="list"),
        pytest.param(None, id="none"),
    ],
)
def test_rejects_what_is_not_a_report(bad: Any) -> None:
    with pytest.raises(ConfigError, match="RunReport, a Comparison"):
        render_text(bad)


def test_accepts_an_object_with_to_dict() -> None:
    class Wrapped:
        def to_dict(self) -> dict[str, Any]:
            return ungraded_report()

    assert render_text(Wrapped()) == render_text(ungraded_report())
