"""The table cells the renderers share: one row builder, the same cells in every format."""

from __future__ import annotations

import re

from tests.support.reports import HOSTILE_ID, blocking_comparison

from aieval.report import render_github, render_html, render_markdown, render_text
from aieval.report._cells import changes_line, metric_row


def _hostile_n() -> dict[str, object]:
    """A stored comparison whose first metric's paired count was edited into table syntax."""
    doc = blocking_comparison()
    doc["metrics"][0]["n"] = f"3 | {HOSTILE_ID}"
    return doc


def test_markdown_and_github_escape_the_metric_count() -> None:
    for text in (render_markdown(_hostile_n()), render_github(_hostile_n())):
        row = next(line for line in text.splitlines() if "3 \\|" in line)
        assert "<script>" not in text
        assert len(re.findall(r"(?<!\\)\|", row)) == 8, row  # 7 cells, none split


def test_every_format_shows_the_same_metric_cells_and_counts() -> None:
    doc = blocking_comparison()
    line = changes_line(doc)
    assert line.startswith(f"{len(doc['regressions'])} regressions · ")
    for render in (render_markdown, render_github, render_html, render_text):
        shown = render(doc)
        assert line in shown, render.__name__
        for metric in doc["metrics"]:
            name, base, cand, delta, *_ = metric_row(metric)
            assert all(cell in shown for cell in (base, cand, delta)), (render.__name__, name)
