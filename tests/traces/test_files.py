"""Bad trace input is a clear error naming the file (and line); an exported file is sniffed as
trace data by its content, and a single pretty-printed export request reads too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_main
from tests.traces._produce import Produced

from aieval._tracefiles import is_trace_data
from aieval.errors import DatasetError, WorkflowError
from aieval.traces import load_traces


def test_a_malformed_line_names_file_and_line(genai: Produced, tmp_path: Path) -> None:
    lines = genai.json_file.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    with pytest.raises(WorkflowError, match=r"bad\.jsonl, line 2: not valid OTLP/JSON"):
        load_traces(bad)


def test_a_span_without_ids_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}
    file.write_text(json.dumps(request) + "\n")
    with pytest.raises(WorkflowError, match=r"t\.jsonl, line 1: span field 'traceId' is missing"):
        load_traces(file)


def test_missing_paths_and_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match="trace file not found"):
        load_traces(tmp_path / "nope.jsonl")
    with pytest.raises(WorkflowError, match="holds no OTLP trace files"):
        load_traces(tmp_path)


def test_one_pretty_printed_request_reads_as_its_lines(genai: Produced, tmp_path: Path) -> None:
    first = json.loads(genai.json_file.read_text().splitlines()[0])
    single = tmp_path / "one.json"
    single.write_text(json.dumps(first, indent=2))
    line = tmp_path / "one.jsonl"
    line.write_text(json.dumps(first) + "\n")
    assert is_trace_data(single) and is_trace_data(tmp_path)
    assert [r.to_dict() for r in load_traces(single)] == [r.to_dict() for r in load_traces(line)]


def test_rows_and_run_logs_are_not_trace_data(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"input": "resourceSpans"}\n')
    log = tmp_path / "run.json"
    log.write_text('{"workflow_id": "r1"}')
    assert not is_trace_data(rows) and not is_trace_data(log) and not is_trace_data(tmp_path)


def test_a_bad_first_line_names_line_1(genai: Produced, tmp_path: Path) -> None:
    lines = genai.json_file.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0][:-5] + "]]]]]", *lines[1:]]) + "\n")
    with pytest.raises(WorkflowError, match=r"bad\.jsonl, line 1: not valid OTLP/JSON"):
        load_traces(bad)


def test_a_time_outside_otlps_range_is_refused_naming_the_line(
    genai: Produced, tmp_path: Path
) -> None:
    lines = genai.json_file.read_text().splitlines()
    request = json.loads(lines[0])
    span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["startTimeUnixNano"] = "99999999999999999999999"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[1:], json.dumps(request)]) + "\n")
    with pytest.raises(WorkflowError, match=rf"bad\.jsonl, line {len(lines)}: .*outside OTLP's"):
        load_traces(bad)


def _one_line(tmp_path: Path, *spans: dict[str, Any]) -> Path:
    file = tmp_path / "traces.jsonl"
    request = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    file.write_text(json.dumps(request) + "\n")
    return file


def _span(span_id: str, name: str, parent: str = "", **more: Any) -> dict[str, Any]:
    times = {"startTimeUnixNano": "1", "endTimeUnixNano": "2"}
    return {
        "traceId": "a" * 32,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        **times,
        **more,
    }


def test_a_malformed_attribute_names_the_file_line_and_span(tmp_path: Path) -> None:
    file = _one_line(
        tmp_path, _span("1" * 16, "app"), _span("2" * 16, "chat", "1" * 16, attributes={"k": 1})
    )
    with pytest.raises(
        DatasetError,
        match=r"traces\.jsonl, line 1: span 'chat' \(2{16}\) cannot be read: attributes: Expected",
    ):
        load_traces(file)


def test_aieval_run_over_a_trace_file_prints_the_malformed_span_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = {"key": "n", "value": {"intValue": "many"}}
    _one_line(tmp_path, _span("1" * 16, "app"), _span("2" * 16, "chat", "1" * 16, attributes=[bad]))
    (tmp_path / "wf.yaml").write_text("name: w\nsteps:\n  - {name: app}\n")
    (tmp_path / "eval.yaml").write_text("name: t\ndataset: traces.jsonl\nworkflow: wf.yaml\n")
    done = run_main(capsys, monkeypatch, "run", "eval.yaml", "--db", "runs.db", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "traces.jsonl, line 1: span 'chat' (2222222222222222) cannot be read" in done.stderr


def test_ids_that_are_not_hex_of_their_size_are_refused_in_files(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    path_id = "../../../../etc/passwd%00".ljust(32, "A")
    file = _one_line(tmp_path, {**_span("1" * 16, "app"), "traceId": path_id})
    with pytest.raises(WorkflowError, match=r"traces\.jsonl, line 1: .*'traceId' is not a 16-byte"):
        load_traces(file)
    message = ExportTraceServiceRequest()
    span = message.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"../../../etc/passwd\x00", b"\x01" * 8, "x"
    proto = tmp_path / "t.pb"
    proto.write_bytes(message.SerializeToString())
    with pytest.raises(WorkflowError, match=r"t\.pb: span 'x': trace, span and parent ids must"):
        load_traces(proto)
