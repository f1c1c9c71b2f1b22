"""Memory stays bounded: grouping spills to disk past a byte budget (and grades the same), and
an export request too large to decode whole is refused before it is read, naming the file, the
line (or message), its size and the limit, unless the limit is raised."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from tests.traces._definition import DEFINITION, SCORES
from tests.traces._produce import Produced

from aieval.errors import ConfigError, WorkflowError
from aieval.traces import MAX_REQUEST_BYTES_ENV, TraceReading, iter_trace_runs, load_traces
from aieval.workflows import evaluate_run, load_workflow

BOTH = pytest.mark.parametrize("kind", ["json", "proto"])


def _grades(path: Path, reading: TraceReading, **bounds: int) -> dict[str, dict[str, object]]:
    definition = load_workflow(DEFINITION)
    return {
        run.workflow_id: {
            "run": run.to_dict(),
            "evaluation": evaluate_run(run, workflow=definition, scores=SCORES).to_dict(),
        }
        for run in iter_trace_runs(path, reading, **bounds)
    }


@BOTH
def test_a_byte_budget_spills_and_grades_the_same(genai: Produced, kind: str) -> None:
    source = genai.json_file if kind == "json" else genai.proto_file
    held, spilled = TraceReading(), TraceReading()
    whole = _grades(source, held)
    # a budget of a few spans' bytes, the span count never reached: the bytes decide
    budget = _grades(source, spilled, max_bytes_in_memory=4_000, max_spans_in_memory=10**9)
    assert held.spills == 0 and spilled.spills > 1
    assert spilled.spans == held.spans and spilled.traces == held.traces == len(genai.trace_ids)
    assert budget == whole
    assert {e["evaluation"]["grade"] for e in budget.values()} >= {"A", "F"}


def test_the_budget_counts_bytes_not_spans(genai: Produced) -> None:
    size = genai.json_file.stat().st_size
    reading = TraceReading()
    list(iter_trace_runs(genai.json_file, reading, max_bytes_in_memory=size // 4))
    # the spans of the file take at least the file's bytes: four budgets' worth spill 3-4 times
    assert 3 <= reading.spills <= reading.spans


def test_bounds_must_be_positive(genai: Produced) -> None:
    with pytest.raises(ConfigError, match="max_bytes_in_memory: expected a positive"):
        list(iter_trace_runs(genai.json_file, max_bytes_in_memory=0))
    with pytest.raises(ConfigError, match="max_request_bytes: expected a positive"):
        load_traces(genai.json_file, max_request_bytes=-1)


def _longest_line(path: Path) -> tuple[int, int]:
    """(line number, length without its newline) of the file's longest line."""
    lengths = [len(line) for line in path.read_bytes().splitlines()]
    size = max(lengths)
    return lengths.index(size) + 1, size


def test_a_line_over_the_limit_names_file_line_size_and_limit(genai: Produced) -> None:
    number, size = _longest_line(genai.json_file)
    expected = (
        rf"{genai.json_file.name}, line {number}: one export request of {size:,} bytes .* "
        rf"over the limit of {size - 1:,} bytes .*max_request_bytes="
    )
    with pytest.raises(WorkflowError, match=expected):
        load_traces(genai.json_file, max_request_bytes=size - 1)
    raised = load_traces(genai.json_file, max_request_bytes=size)  # the limit is inclusive
    assert [r.to_dict() for r in raised] == [r.to_dict() for r in load_traces(genai.json_file)]


def test_the_environment_sets_the_limit_for_eval_files(
    genai: Produced, monkeypatch: pytest.MonkeyPatch
) -> None:
    number, size = _longest_line(genai.json_file)
    monkeypatch.setenv(MAX_REQUEST_BYTES_ENV, str(size - 1))
    with pytest.raises(WorkflowError, match=rf"line {number}: .*{MAX_REQUEST_BYTES_ENV}"):
        load_traces(genai.json_file)
    monkeypatch.setenv(MAX_REQUEST_BYTES_ENV, "lots")
    with pytest.raises(ConfigError, match=rf"{MAX_REQUEST_BYTES_ENV}='lots': expected"):
        load_traces(genai.json_file)


def test_a_huge_line_is_refused_without_being_held(genai: Produced, tmp_path: Path) -> None:
    """One line holding every request's spans many times over (20 MB): refused at a 1 MiB limit
    while holding a few MiB at most, whatever the line's size."""
    requests = [json.loads(line) for line in genai.json_file.read_text().splitlines()]
    merged = {"resourceSpans": [rs for r in requests for rs in r["resourceSpans"]]}
    piece = json.dumps(merged["resourceSpans"])[1:-1]
    copies = 20_000_000 // len(piece) + 1
    huge = tmp_path / "huge.jsonl"
    with huge.open("w") as out:
        out.write(json.dumps(requests[0]) + "\n")
        out.write('{"resourceSpans": [' + ",".join([piece] * copies) + "]}\n")
    size = len(huge.read_bytes().splitlines()[1])
    tracemalloc.start()
    try:
        with pytest.raises(WorkflowError, match=rf"huge\.jsonl, line 2: .* of {size:,} bytes"):
            load_traces(huge, max_request_bytes=2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 19_000_000 and peak < 6 * 2**20, peak
    reading = TraceReading()  # raised past the line's size, the line reads whole
    list(iter_trace_runs(huge, reading, max_request_bytes=size))
    first_line = json.dumps(requests[0]).count('"spanId"')
    assert reading.spans == piece.count('"spanId"') * copies + first_line
    assert reading.traces == len(genai.trace_ids) and not reading.incomplete


def test_a_one_object_file_over_the_limit_is_refused(genai: Produced, tmp_path: Path) -> None:
    first = json.loads(genai.json_file.read_text().splitlines()[0])
    single = tmp_path / "one.json"
    single.write_text(json.dumps(first, indent=2))
    size = single.stat().st_size
    with pytest.raises(WorkflowError, match=rf"one\.json \(one JSON object\): .* {size:,} bytes"):
        load_traces(single, max_request_bytes=size - 1)
    assert load_traces(single, max_request_bytes=size)


def test_a_protobuf_message_over_the_limit_names_the_message(
    genai: Produced, tmp_path: Path
) -> None:
    data = genai.proto_file.read_bytes()
    sizes, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        sizes.append(size)
        at += 4 + size
    biggest = max(sizes)
    index = sizes.index(biggest) + 1
    with pytest.raises(WorkflowError, match=rf"message {index}: .* of {biggest:,} bytes"):
        load_traces(genai.proto_file, max_request_bytes=biggest - 1)
    body = tmp_path / "body.pb"  # one message, as an OTLP/HTTP body
    body.write_bytes(data[4 : 4 + sizes[0]])
    with pytest.raises(WorkflowError, match=r"body\.pb \(one protobuf message\)"):
        load_traces(body, max_request_bytes=sizes[0] - 1)
