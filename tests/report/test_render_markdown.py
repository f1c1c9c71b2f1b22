from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.reports import (
    HOSTILE_ID,
    blocking_comparison,
    graded_report,
    promoting_comparison,
    ungraded_report,
)

from aieval.report import render_markdown
from aieval.report._markdown import escape


def _tables(text: str) -> list[list[str]]:
    """Each GFM table as its lines (a run of lines starting with '|')."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def _cells(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def test_every_table_is_well_formed(document: dict[str, Any]) -> None:
    tables = _tables(render_markdown(document))
    assert tables
    for lines in tables:
        assert len(lines) >= 3, "header, alignment row and at least one row"
        assert re.fullmatch(r"\|( :?-{3,}:? \|)+", lines[1])
        widths = {_cells(line) for line in lines}
        assert len(widths) == 1, f"ragged table: {lines}"


def test_comparison_starts_with_the_decision() -> None:
    promote = render_markdown(promoting_comparison()).splitlines()[0]
    block = render_markdown(blocking_comparison()).splitlines()[0]
    assert promote == f"### ✅ {escape(promoting_comparison()['decision']['summary'])}"
    assert block == f"### ❌ {escape(blocking_comparison()['decision']['summary'])}"


def test_one_line_per_rule_with_its_mark() -> None:
    doc = blocking_comparison()
    lines = [line for line in render_markdown(doc).splitlines() if line.startswith("- ")]
    assert len(lines) == len(doc["decision"]["rules"])
    for line, rule in zip(lines, doc["decision"]["rules"], strict=True):
        assert rule["rule"] in line
        assert line.startswith("- ✅" if rule["passed"] else "- ❌")


def test_long_lists_fold_into_details_and_short_ones_do_not() -> None:
    long_doc = blocking_comparison()  # 13 regressions
    short_doc = promoting_comparison()  # 1 regression, 2 improvements
    assert f"<summary>Regressions ({len(long_doc['regressions'])})</summary>" in (
        render_markdown(long_doc)
    )
    assert "<details>" not in render_markdown(short_doc)


def test_folded_lists_are_capped_and_say_so() -> None:
    doc = blocking_comparison()
    template = doc["regressions"][0]
    doc["regressions"] = [{**template, "id": f"ex-{i}"} for i in range(80)]
    doc["regressions_count"] = 120
    text = render_markdown(doc)
    assert "<summary>Regressions (50 of 120)</summary>" in text
    assert "ex-49" in text and "ex-50" not in text


def test_no_html_beyond_details_and_untrusted_text_escaped() -> None:
    for doc in (graded_report(), blocking_comparison()):
        text = render_markdown(doc)
        tags = set(re.findall(r"</?([a-zA-Z]+)", text))
        assert tags <= {"details", "summary"}
        assert HOSTILE_ID not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in render_markdown(graded_report())


def test_ungraded_report_has_no_grade_table() -> None:
    text = render_markdown(ungraded_report())
    assert "| A | B | C | D | F |" not in text
    assert "Gate failure rates" not in text
    assert "token\\_f1" in text


@settings(deadline=None)  # timing varies on a loaded CI machine; the property does not
@given(st.text())
def test_escaped_cells_cannot_break_a_table_or_open_a_tag(raw: str) -> None:
    cell = escape(raw)
    assert "\n" not in cell and "<" not in cell and ">" not in cell
    assert _cells(f"| {cell} |") == 1
