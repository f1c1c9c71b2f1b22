"""Traces are graded exactly as recorded runs: profile D's gates, critical steps, efficiency
and per-agent roll-ups; an incomplete trace fails ``trace_complete`` instead of being graded
on the part that arrived."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from tests.traces._definition import DEFINITION, SCORES
from tests.traces._produce import Produced, produce

from aieval import run
from aieval.runner import load_eval, run_eval
from aieval.store import Store
from aieval.traces import TraceReading, iter_trace_runs, load_traces
from aieval.workflows import evaluate_run, load_workflow

BOTH = pytest.mark.parametrize("traces", ["genai", "openinference"], indirect=True)
EXPECTED = {
    "ok": None,
    "forbidden": "no_forbidden_tool_invoked",
    "bad_args": "tool_call_schema_valid",
    "bad_handoff": "handoff_graph_respected",
    "llm_error": "no_critical_step_failures",
}


@BOTH
def test_profile_d_gates_on_traces(traces: Produced) -> None:
    definition = load_workflow(DEFINITION)
    runs = {r.workflow_id: r for r in load_traces(traces.json_file)}
    for scenario, failing in EXPECTED.items():
        ev = evaluate_run(runs[traces.trace_ids[scenario]], workflow=definition, scores=SCORES)
        failed = {g.name for g in ev.gate_failures}
        assert ev.hard_gates["trace_complete"] is True, scenario
        if failing is None:
            assert failed == set() and ev.passed and ev.grade == "A", (scenario, ev.reasons)
        else:
            assert failing in failed and ev.grade == "F" and not ev.passed, (scenario, failed)


@BOTH
def test_per_agent_rollup_and_efficiency(traces: Produced) -> None:
    definition = load_workflow(DEFINITION)
    runs = {r.workflow_id: r for r in load_traces(traces.json_file)}
    ok = runs[traces.trace_ids["ok"]]
    ev = evaluate_run(ok, workflow=definition, scores=SCORES)
    assert set(ev.agents) == {"triage", "billing", "writer"}
    assert ev.efficiency["raw"]["latency_s"] == pytest.approx(ok.duration_s)
    assert ev.efficiency["raw"]["tokens"] == ok.tokens == 212


def test_an_app_killed_mid_trace_fails_trace_complete(tmp_path: Path) -> None:
    produced = produce(tmp_path, "genai", ["ok", "killed"])
    reading = TraceReading()
    runs = {r.workflow_id: r for r in iter_trace_runs(produced.json_file, reading)}
    killed = runs[produced.trace_ids["killed"]]
    ev = evaluate_run(killed, workflow=load_workflow(DEFINITION), scores=SCORES)
    assert ev.hard_gates["trace_complete"] is False and ev.grade == "F" and not ev.passed
    [gate] = [g for g in ev.gate_failures if g.name == "trace_complete"]
    assert "parent never arrived" in gate.reason and "no root span" in gate.reason
    assert "'invoke_agent triage'" in gate.reason  # names the spans concerned
    assert set(reading.incomplete) == {produced.trace_ids["killed"]}
    whole = evaluate_run(runs[produced.trace_ids["ok"]], workflow=load_workflow(DEFINITION))
    assert whole.hard_gates["trace_complete"] is True


@pytest.mark.parametrize("kind", ["json", "proto"])
def test_a_cut_file_fails_trace_complete_for_its_traces(
    genai: Produced, tmp_path: Path, kind: str
) -> None:
    source = genai.json_file if kind == "json" else genai.proto_file
    cut = tmp_path / source.name
    data = source.read_bytes()
    cut.write_bytes(data[: len(data) - 200])  # the exporter stopped mid-write
    reading = TraceReading()
    runs = list(iter_trace_runs(cut, reading))
    assert reading.incomplete, "a cut trace must not read as complete"
    for trace_id, missing in reading.incomplete.items():
        assert any("unfinished export" in m or "cut short" in m for m in missing), missing
        run_ = next(r for r in runs if r.workflow_id == trace_id)
        ev = evaluate_run(run_, workflow=load_workflow(DEFINITION), scores=SCORES)
        assert ev.hard_gates["trace_complete"] is False and ev.grade == "F"


def test_run_grades_a_trace_file_and_stores_the_verdicts(genai: Produced, tmp_path: Path) -> None:
    result = run(
        name="traces", dataset=genai.json_file, scorers=[], workflow=DEFINITION, store=None
    )
    assert {s.id for s in result.samples} == set(genai.trace_ids.values())
    gates = {
        s.id: {g.name: g.passed for g in s.verdict.gates}
        for s in result.samples
        if s.verdict is not None
    }
    ids = genai.trace_ids
    assert len(gates) == len(ids)
    assert gates[ids["forbidden"]]["no_forbidden_tool_invoked"] is False
    assert all(g["trace_complete"] for g in gates.values())
    assert result.summary["evaluation"]["gate_failure_rates"]["trace_complete"] == 0.0


def test_an_eval_file_names_a_trace_folder_as_its_dataset(genai: Produced, tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(genai.proto_file, folder / "export.pb")
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(DEFINITION))
    (tmp_path / "eval.yaml").write_text("name: t\ndataset: traces\nworkflow: wf.yaml\n")
    [result] = run_eval(load_eval(tmp_path / "eval.yaml"), store=Store(tmp_path / "db.sqlite"))
    assert len(result.samples) == len(genai.trace_ids)
    verdict = result.samples[0].verdict
    assert verdict is not None and verdict.workflow is not None
    assert verdict.workflow["profile"] == "D"


def test_a_span_ending_before_it_starts_fails_trace_complete(
    genai: Produced, tmp_path: Path
) -> None:
    """An exporter's clock gone backwards: the span's times cannot be trusted, so the trace is
    not complete, and the reason names the span."""
    lines = genai.json_file.read_text().splitlines()
    requests = [json.loads(line) for line in lines]
    ok = genai.trace_ids["ok"]
    spans = [
        span
        for request in requests
        for rs in request["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        if span["traceId"] == ok and span["name"].startswith("invoke_agent billing")
    ]
    [span] = spans
    span["endTimeUnixNano"] = str(int(span["startTimeUnixNano"]) - 1_000)
    bad = tmp_path / "backwards.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in requests))
    reading = TraceReading()
    runs = {r.workflow_id: r for r in iter_trace_runs(bad, reading)}
    assert set(reading.incomplete) == {ok}
    ev = evaluate_run(runs[ok], workflow=load_workflow(DEFINITION), scores=SCORES)
    assert ev.hard_gates["trace_complete"] is False and ev.grade == "F" and not ev.passed
    [gate] = [g for g in ev.gate_failures if g.name == "trace_complete"]
    assert "end before they start" in gate.reason
    assert f"{span['name']!r} ({span['spanId']}" in gate.reason
    untouched = {r.workflow_id: r for r in load_traces(genai.json_file)}
    assert untouched[ok].metadata["trace"]["complete"] is True
