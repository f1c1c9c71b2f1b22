"""A comparison's tie-break names whose number is whose, and what the number is."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from tests.report.golden.fixture import golden_path

from aieval.report import (
    comparison_schema,
    render_github,
    render_html,
    render_markdown,
    render_text,
)


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden_path().read_text(encoding="utf-8"))
    # the golden comparisons block, and a blocked decision shows no tie-break: these read as
    # undecided ones, which do
    for doc in data.values():
        if doc.get("kind") == "comparison":
            doc["decision"]["outcome"] = "inconclusive"
    return data


@pytest.mark.parametrize(
    ("key", "line"),
    [
        (
            "compare:epochs",
            "baseline ranks first on p95 latency in seconds (lower wins): baseline 2.502 vs "
            "candidate 2.505",
        ),
        (
            "compare:graded",
            "baseline ranks first on hard-gate failures (fewer wins): baseline 68 vs candidate 77",
        ),
    ],
)
def test_tie_break_line_labels_each_number(golden: dict[str, Any], key: str, line: str) -> None:
    doc = golden[key]
    jsonschema.Draft202012Validator(comparison_schema()).validate(doc)
    text = " ".join(render_text(doc, width=400).split())
    assert f"tie-break: {line}" in text
    assert f"<p>Tie-break: {line}</p>" in render_html(doc)
    for markdown in (render_markdown(doc), render_github(doc)):  # escaped: "(lower wins)" stays
        assert f"Tie-break: {line}" in markdown.replace("\\", "")


def test_a_candidate_winning_on_latency_says_so(golden: dict[str, Any]) -> None:
    doc = copy.deepcopy(golden["compare:epochs"])
    doc["tie_break"].update(
        winner="candidate",
        baseline_value=0.03828,
        candidate_value=0.003214,
        reason="candidate ranks first on p95_latency (0.03828 vs 0.003214)",
    )
    text = " ".join(render_text(doc, width=400).split())
    assert (
        "tie-break: candidate ranks first on p95 latency in seconds (lower wins): "
        "baseline 0.03828 vs candidate 0.003214"
    ) in text


def test_a_comparison_stored_without_the_numbers_gives_its_reason(
    golden: dict[str, Any],
) -> None:
    doc = copy.deepcopy(golden["compare:epochs"])
    del doc["tie_break"]["baseline_value"], doc["tie_break"]["candidate_value"]
    jsonschema.Draft202012Validator(comparison_schema()).validate(doc)
    text = " ".join(render_text(doc, width=400).split())
    assert "tie-break: baseline (p95_latency): baseline ranks first on p95_latency" in text
