"""Traces made by real instrumentation map onto the run model (GenAI conventions and
OpenInference): agents as steps, tool spans as their tool calls, model calls as model, tokens
and errors, the final output, and what was not mapped."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.traces._produce import MODEL, Produced

from aieval.traces import TraceReading, iter_trace_runs, load_traces
from aieval.workflows import WorkflowRun

BOTH = pytest.mark.parametrize("traces", ["genai", "openinference"], indirect=True)


def by_id(runs: list[WorkflowRun]) -> dict[str, WorkflowRun]:
    return {r.workflow_id: r for r in runs}


@BOTH
def test_agents_are_steps_with_their_tool_calls_model_and_tokens(traces: Produced) -> None:
    reading = TraceReading()
    runs = by_id(list(iter_trace_runs(traces.json_file, reading)))
    assert set(runs) == set(traces.trace_ids.values())  # one run per trace
    ok = runs[traces.trace_ids["ok"]]
    assert [(s.name, s.agent_role, s.status) for s in ok.steps] == [
        ("triage", "triage", "success"),
        ("billing", "billing", "success"),
        ("writer", "writer", "success"),
    ]
    assert ok.status == "success" and ok.workflow_name == "support workflow"
    assert all(s.model_used == MODEL for s in ok.steps)
    billing = ok.steps[1]
    # two model calls: 50 + 40 prompt tokens, 12 + 10 completion tokens (the server's usage)
    assert (billing.metadata["input_tokens"], billing.metadata["output_tokens"]) == (90, 22)
    assert ok.tokens == 50 + 90 + 22 + 50
    [call] = billing.metadata["tool_calls"]
    assert call["name"] == "get_order" and call["id"] == "call_0_get_order"
    assert call["arguments"] == '{"order_id": "A1042"}' and call["executed"] is True
    assert call["status"] == "success" and "A1042" in call["result"]
    assert ok.outputs == {"output": "Your refund for order A1042 is on its way."}
    assert ok.inputs is not None and "A1042" in str(ok.inputs["input"])
    assert ok.duration_s is not None and ok.duration_s > 0
    meta = ok.metadata["trace"]
    assert meta["complete"] is True and meta["missing"] == []
    assert meta["unmapped"] == {"cache lookup": 1}  # counted, never dropped unseen
    assert reading.unmapped == {"cache lookup": 1} and reading.incomplete == {}
    assert reading.traces == len(traces.trace_ids) and reading.spans > 40


@BOTH
def test_a_failed_model_call_fails_its_step_and_the_run(traces: Produced) -> None:
    runs = by_id(load_traces(traces.json_file))
    failed = runs[traces.trace_ids["llm_error"]]
    assert failed.status == "failed" and "500" in (failed.error or "")
    assert [(s.name, s.status) for s in failed.steps] == [
        ("triage", "success"),
        ("billing", "failed"),
    ]
    assert "500" in (failed.steps[1].error or "") and failed.steps[1].error_type
    assert failed.outputs is None


def test_requested_but_unexecuted_tool_calls_count(openinference: Produced) -> None:
    runs = by_id(load_traces(openinference.json_file))
    billing = runs[openinference.trace_ids["unexecuted"]].step("billing")
    assert billing is not None
    calls = [(c["name"], c["executed"]) for c in billing.metadata["tool_calls"]]
    assert calls == [("get_order", True), ("issue_refund", False)]


@BOTH
def test_protobuf_file_and_folder_read_as_the_json_lines(traces: Produced, tmp_path: Path) -> None:
    from_json = [r.to_dict() for r in load_traces(traces.json_file)]
    assert [r.to_dict() for r in load_traces(traces.proto_file)] == from_json
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(traces.json_file, folder / "a.jsonl")
    shutil.copy(traces.proto_file, folder / "b.pb")
    both = load_traces(folder)  # the same spans twice: each span counts once
    assert [r.to_dict()["steps"] for r in both] == [r["steps"] for r in from_json]
    assert all(r.metadata["trace"]["duplicate_spans"] > 0 for r in both)


def test_spilling_to_disk_gives_the_same_runs(genai: Produced) -> None:
    held = [r.to_dict() for r in iter_trace_runs(genai.json_file)]
    spilled = [r.to_dict() for r in iter_trace_runs(genai.json_file, max_spans_in_memory=3)]
    assert spilled == held


def test_a_run_round_trips_through_its_recorded_json(genai: Produced) -> None:
    """What a dataset row stores (ISO times: microseconds, not the spans' nanoseconds)."""
    for run in load_traces(genai.json_file):
        again = WorkflowRun.from_dict(run.to_dict())
        assert [s.metadata for s in again.steps] == [s.metadata for s in run.steps]
        assert (again.outputs, again.status, again.tokens) == (run.outputs, run.status, run.tokens)
        assert again.duration_s == pytest.approx(run.duration_s, abs=1e-5)
