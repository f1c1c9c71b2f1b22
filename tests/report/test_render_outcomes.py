"""The third outcome renders in every format; documents stored before it still render."""

from __future__ import annotations

import copy

from tests.support.reports import blocking_comparison, inconclusive_comparison

from aieval.report import render_html, render_markdown, render_text


def test_inconclusive_shows_as_its_own_outcome_everywhere() -> None:
    doc = inconclusive_comparison()
    text = render_text(doc)
    assert "? inconclusive" in text and "INCONCLUSIVE" in text and "FAIL" not in text
    md = render_markdown(doc)
    assert md.count("❔") == 2 and "❌" not in md
    html = render_html(doc)
    assert 'class="verdict inconclusive"' in html and '<span class="inc">INCONCLUSIVE' in html
    assert "3.10" in text and "3.10" in md and "3.10" in html  # the minimum provable margin


def test_documents_without_outcomes_render_from_promote_and_passed() -> None:
    doc = copy.deepcopy(blocking_comparison())
    del doc["decision"]["outcome"]
    for rule in doc["decision"]["rules"]:
        del rule["outcome"]
    assert 'class="verdict block"' in render_html(doc)
    assert "✘" in render_text(doc) and "FAIL" in render_text(doc)
