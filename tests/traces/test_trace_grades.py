"""Grades of real traces say what they stand on: the share of the weights a weighted score
covers (in the payload and every report format), the criteria computed from the trace, and
why an output is missing when the instrumentation recorded no message content."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import run_main
from tests.traces._definition import DEFINITION
from tests.traces._produce import Produced, produce

from aieval.report import build_report, render_html, render_json, render_markdown, render_text
from aieval.runner import load_eval, run_eval
from aieval.store import Store
from aieval.traces import load_traces
from aieval.workflows import evaluate_run, load_workflow

UNSCORED = "task_correctness"
BOTH = pytest.mark.parametrize("traces", ["genai", "openinference"], indirect=True)


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


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Produced:
    """Traces of an app that records no content itself, with the openai-v2 instrumentation at
    its default (no message content)."""
    folder = tmp_path_factory.mktemp("bare")
    return produce(folder, "genai", ["ok", "no_content"], capture_content=False)


def test_an_output_missing_for_want_of_recorded_content_says_so(bare: Produced) -> None:
    runs = {r.workflow_id: r for r in load_traces(bare.json_file)}
    bare_run = runs[bare.trace_ids["no_content"]]
    assert bare_run.metadata["trace"]["message_content"] is False
    ev = evaluate_run(bare_run, workflow=load_workflow(DEFINITION))
    [gate] = [g for g in ev.gate_failures if g.name == "required_outputs_present"]
    assert "required outputs missing: output" in gate.reason
    assert "records no message content" in gate.reason
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in gate.reason
    assert gate.evidence["message_content_recorded"] is False
    # a trace whose app recorded its answer: content recorded, the gate passes as before
    ok = runs[bare.trace_ids["ok"]]
    assert ok.metadata["trace"]["message_content"] is True
    assert evaluate_run(ok, workflow=load_workflow(DEFINITION)).hard_gates[
        "required_outputs_present"
    ]


def test_a_run_failed_for_other_reasons_gets_no_content_hint(genai: Produced) -> None:
    """The app recorded content (the question on its root span): an output missing because
    the model call failed is not put down to the instrumentation."""
    runs = {r.workflow_id: r for r in load_traces(genai.json_file)}
    ev = evaluate_run(runs[genai.trace_ids["llm_error"]], workflow=load_workflow(DEFINITION))
    [gate] = [g for g in ev.gate_failures if g.name == "required_outputs_present"]
    assert "message content" not in gate.reason


def test_show_prints_steps_tool_calls_and_tokens_per_trace(
    genai: Produced,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(_allowing(DEFINITION)))
    (tmp_path / "eval.yaml").write_text(f"name: t\ndataset: {genai.json_file}\nworkflow: wf.yaml\n")
    store = Store(tmp_path / "db.sqlite")
    try:
        run_eval(load_eval(tmp_path / "eval.yaml"), store=store)
    finally:
        store.close()
    args = ("show", "t", "--db", "db.sqlite", "--samples", "10")
    done = run_main(capsys, monkeypatch, *args, cwd=tmp_path, env={"COLUMNS": "240"})
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("steps per run") :]
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if "│" in line}
    ok, forbidden = genai.trace_ids["ok"], genai.trace_ids["forbidden"]
    # each trace's first step row carries its id, then its steps and a total row
    assert "triage" in rows[ok] and "40/10" in rows[ok]
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if forbidden in line)
    billing, _, total = lines[start + 1 : start + 4]
    assert "billing" in billing and "delete_account" in billing and "90/22" in billing
    assert "all 3 steps" in total and "170/42" in total and "1 tool call" in total
    # the score column says what share of the weights the score covers
    assert "100.00 over 80% of the weights" in done.stdout  # all but task_correctness


EXPECTED_CRITERIA = {
    # scenario: tool_selection_accuracy, argument_correctness, handoff_accuracy (None: unscored)
    "ok": (1.0, 1.0, 1.0),
    "forbidden": (0.0, None, 1.0),  # delete_account: not a declared tool; no call to one
    "bad_args": (1.0, 0.0, 1.0),  # get_order with a number for order_id
    "bad_handoff": (None, None, 2 / 3),  # no tool calls; writer -> billing is not allowed
}


@BOTH
def test_profile_d_criteria_are_computed_from_the_trace(traces: Produced) -> None:
    runs = {r.workflow_id: r for r in load_traces(traces.json_file)}
    names = ("tool_selection_accuracy", "argument_correctness", "handoff_accuracy")
    for scenario, expected in EXPECTED_CRITERIA.items():
        ev = evaluate_run(runs[traces.trace_ids[scenario]], workflow=load_workflow(DEFINITION))
        scored = {c["name"]: c for c in ev.criteria}
        missing = {m["name"]: m["reason"] for m in ev.missing_criteria}
        for name, want in zip(names, expected, strict=True):
            if want is None:
                assert name in missing and name not in scored, (scenario, name)
            else:
                assert scored[name]["normalized"] == pytest.approx(want), (scenario, name)
                assert scored[name]["source"] == "trace" and scored[name]["evidence"]
        # whether the task was done right is not in a trace: named, with what to do
        assert "scorer named task_correctness" in missing["task_correctness"], scenario
        assert ev.score_coverage is not None and UNSCORED in ev.score_coverage["unscored"]
    bad = evaluate_run(runs[traces.trace_ids["bad_handoff"]], workflow=load_workflow(DEFINITION))
    reasons = {m["name"]: m["reason"] for m in bad.missing_criteria}
    assert "no tool calls" in reasons["tool_selection_accuracy"]


def test_a_scorer_of_the_same_name_wins_over_the_trace(genai: Produced) -> None:
    runs = {r.workflow_id: r for r in load_traces(genai.json_file)}
    ev = evaluate_run(
        runs[genai.trace_ids["forbidden"]],
        workflow=load_workflow(DEFINITION),
        scores={"tool_selection_accuracy": 0.5, "task_correctness": 1.0},
    )
    scored = {c["name"]: c for c in ev.criteria}
    assert scored["tool_selection_accuracy"]["normalized"] == 0.5
    assert scored["tool_selection_accuracy"]["source"] == "scorer"


def test_the_docs_trace_example_grades_with_a_scorer_for_the_task(
    genai: Produced, tmp_path: Path
) -> None:
    """The eval file of docs/workflows.md with the output check it shows: every criterion is
    scored on a whole trace, so a good trace passes on its own merits and a bad one fails."""
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(DEFINITION))
    (tmp_path / "eval.yaml").write_text(
        f"name: t\ndataset: {genai.json_file}\nworkflow: wf.yaml\nprofile: D\n"
        "scorers:\n  - icontains_any: {values: [refund], name: task_correctness}\n"
    )
    [result] = run_eval(load_eval(tmp_path / "eval.yaml"), store=None)
    verdicts = {s.id: s.verdict for s in result.samples if s.verdict is not None}
    ok = verdicts[genai.trace_ids["ok"]]
    assert ok.passed and ok.grade == "A" and ok.weighted_score == 100.0
    assert ok.workflow is not None and ok.workflow["score_coverage"]["share"] == 1.0
    handoff = verdicts[genai.trace_ids["bad_handoff"]]
    assert handoff.grade == "F" and handoff.workflow is not None
    assert handoff.workflow["score_coverage"]["share"] < 1
