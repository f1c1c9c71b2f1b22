"""Grades of real traces say what they stand on: the share of the weights a weighted score
covers (in the payload and every report format), the criteria computed from the trace, and
why an output is missing when the instrumentation recorded no message content."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import yaml
from tests.traces._definition import DEFINITION
from tests.traces._produce import Produced

from aieval.report import build_report, render_html, render_json, render_markdown, render_text
from aieval.runner import load_eval, run_eval
from aieval.store import Store
from aieval.traces import load_traces
from aieval.workflows import evaluate_run, load_workflow

UNSCORED = "task_correctness"


def _allowing(definition: dict[str, Any]) -> dict[str, Any]:
    evaluation = {**definition["evaluation"], "allow_missing_criteria": True}
    return {**definition, "evaluation": evaluation}


def test_a_score_over_part_of_the_weights_says_so(genai: Produced) -> None:
    runs = {r.workflow_id: r for r in load_traces(genai.json_file)}
    ok = runs[genai.trace_ids["ok"]]
    ev = evaluate_run(ok, workflow=load_workflow(_allowing(DEFINITION)))
    coverage = ev.score_coverage
    assert coverage is not None and UNSCORED in coverage["unscored"]
    assert 0 < coverage["share"] < 1
    assert coverage["text"].startswith(f"{ev.weighted_score:.2f} over ")
    assert f"criteria unscored: {', '.join(coverage['unscored'])}" in coverage["text"]
    # the band line names what the grade stands on, not only the band
    assert "falls in band" in ev.placement[0] and coverage["detail"] in ev.placement[0]
    assert ev.to_dict()["score_coverage"] == coverage


def test_every_report_format_shows_the_coverage(genai: Produced, tmp_path: Path) -> None:
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(_allowing(DEFINITION)))
    (tmp_path / "eval.yaml").write_text(f"name: t\ndataset: {genai.json_file}\nworkflow: wf.yaml\n")
    store = Store(tmp_path / "db.sqlite")
    try:
        [result] = run_eval(load_eval(tmp_path / "eval.yaml"), store=store)
        report = build_report(store, result.id, n_resamples=50, seed=1)
    finally:
        store.close()
    block = report.to_dict()["weighted_score"]
    coverage = block["coverage"]
    assert 0 < coverage["min_share"] <= coverage["mean_share"] < 1
    assert coverage["unscored"][UNSCORED] == len(genai.trace_ids)
    text = coverage["text"]
    assert text.startswith("over ") and f"{UNSCORED} (" in text
    assert json.loads(render_json(report))["weighted_score"]["coverage"]["text"] == text
    assert text in render_text(report, width=400)
    assert text.replace("_", "\\_") in render_markdown(report)  # Markdown escapes them
    assert html.escape(text) in render_html(report)
