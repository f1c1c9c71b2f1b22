"""Traces reach workflow grading as their own evaluator plug-in, ``traces``: trace data selects
it, it grades as the ``workflow`` evaluator grades a recorded run, and the ``workflow``
evaluator (which never reads traces) refuses trace data loudly instead of misreading it."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from tests.support.server import LiveServer
from tests.traces._definition import DEFINITION
from tests.traces._produce import Produced

from aieval import run
from aieval.core import SampleRecord, load_plugin, plugin_names
from aieval.errors import ConfigError, WorkflowError
from aieval.runner._evaluator import GROUP, evaluator_name
from aieval.server import ServerSettings, create_app
from aieval.store import Store
from aieval.traces import load_traces
from aieval.traces._evaluator import TraceEvaluator, factory
from aieval.workflows import load_runs

TOKEN = "s3cret-token"


def test_trace_data_selects_the_traces_evaluator(genai: Produced, tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(genai.proto_file, folder / "export.pb")
    logs = tmp_path / "runs"
    logs.mkdir()
    assert "traces" in plugin_names(GROUP) and load_plugin(GROUP, "traces") is factory
    assert evaluator_name(None, DEFINITION, None, genai.json_file) == "traces"
    assert evaluator_name(None, None, None, folder) == "traces"
    assert evaluator_name(None, None, None, logs) == "workflow"  # a folder of run logs
    assert evaluator_name("workflow", None, None, folder) == "workflow"  # named: as named


def test_the_traces_evaluator_grades_as_the_default_and_records_the_same_config(
    genai: Produced, tmp_path: Path
) -> None:
    store = Store(tmp_path / "db.sqlite")
    chosen = run(name="t", dataset=genai.json_file, scorers=[], workflow=DEFINITION, store=store)
    named = run(
        name="t",
        dataset=genai.json_file,
        scorers=[],
        workflow=DEFINITION,
        evaluator="traces",
        store=store,
    )
    assert _verdicts(named.samples) == _verdicts(chosen.samples)
    assert len(_verdicts(named.samples)) == len(genai.trace_ids)
    assert named.summary["evaluation"] == chosen.summary["evaluation"]
    config = store.get_run(named.id).config["workflow"]
    assert config == store.get_run(chosen.id).config["workflow"] and config["profile"] == "D"


def _verdicts(samples: list[SampleRecord]) -> dict[str, tuple[str | None, bool]]:
    return {s.id: (s.verdict.grade, s.verdict.passed) for s in samples if s.verdict is not None}


def test_the_workflow_evaluator_refuses_trace_data_naming_the_traces_one(genai: Produced) -> None:
    with pytest.raises(ConfigError, match=r"trace data, which the 'traces' evaluator reads"):
        run(
            name="t",
            dataset=genai.json_file,
            scorers=[],
            workflow=DEFINITION,
            evaluator="workflow",
            store=None,
        )


def test_load_runs_reads_run_logs_and_sends_trace_data_to_the_trace_reader(
    genai: Produced,
) -> None:
    with pytest.raises(WorkflowError, match=r"trace data, not run logs: .*load_traces"):
        load_runs(genai.json_file)
    rows = TraceEvaluator.rows(genai.json_file)
    assert [r["id"] for r in rows] == [r.workflow_id for r in load_traces(genai.json_file)]
    assert TraceEvaluator.rows(rows) is rows  # rows that already hold runs pass through


def test_the_server_grades_received_traces_with_the_traces_evaluator(
    genai: Produced, tmp_path: Path
) -> None:
    app = create_app(tmp_path / "runs.db", ServerSettings(token=TOKEN, dataset_roots=(tmp_path,)))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with LiveServer(app) as live, httpx.Client(base_url=live.url, headers=auth) as client:
        for line in genai.json_file.read_text().splitlines():
            sent = client.post(
                "/v1/traces", content=line, headers={"Content-Type": "application/json"}
            )
            assert sent.status_code == 200, sent.text
        graded = client.post("/api/traces/evaluations", json={"name": "t", "workflow": DEFINITION})
    app.state.manager.shutdown()
    assert graded.status_code == 200, graded.text
    body = graded.json()
    assert set(body["verdicts"]) == set(genai.trace_ids.values())
    stored = Store(tmp_path / "runs.db").get_run(body["run_id"]).config["spec"]
    assert stored["scoring"]["evaluator"] == "traces"
