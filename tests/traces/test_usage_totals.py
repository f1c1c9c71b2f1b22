"""A trace whose model-call spans do not all report usage has unknown tokens and cost, never
the partial sum of the spans that did; its sample stores each span as a model call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from tests.traces._definition import DEFINITION
from tests.traces._produce import Produced

from aieval.runner import load_eval, run_eval
from aieval.store import Store
from aieval.traces import load_traces

_USAGE = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


def _model_spans(requests: list[dict[str, Any]], trace_id: str) -> list[dict[str, Any]]:
    spans = [
        span
        for request in requests
        for rs in request["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        if span["traceId"] == trace_id and span["name"].startswith("chat ")
    ]
    return sorted(spans, key=lambda s: int(s["startTimeUnixNano"]))


def _partial_trace(genai: Produced, tmp_path: Path) -> tuple[Path, str]:
    """The ``ok`` trace with its first model span's usage removed and a cost on its second."""
    requests = [json.loads(line) for line in genai.json_file.read_text().splitlines()]
    ok = genai.trace_ids["ok"]
    first, second, *_ = _model_spans(requests, ok)
    first["attributes"] = [a for a in first["attributes"] if a["key"] not in _USAGE]
    second["attributes"].append({"key": "gen_ai.usage.cost", "value": {"doubleValue": 0.5}})
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "export.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    return folder, ok


def test_a_trace_with_a_model_span_without_usage_has_unknown_totals(
    genai: Produced, tmp_path: Path
) -> None:
    folder, ok = _partial_trace(genai, tmp_path)
    complete = {r.workflow_id: r for r in load_traces(genai.json_file)}[ok]
    run = {r.workflow_id: r for r in load_traces(folder)}[ok]
    assert complete.input_tokens is not None and complete.tokens is not None
    # before: the spans that reported, summed as if they were all; now unknown
    assert (run.input_tokens, run.output_tokens, run.tokens, run.cost) == (None,) * 4
    first = run.steps[0]
    assert "input_tokens" not in first.metadata and first.tokens is None
    assert [c.get("input_tokens") for c in first.metadata["model_calls"]][:1] == [None]

    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(DEFINITION))
    (tmp_path / "eval.yaml").write_text("name: t\ndataset: traces\nworkflow: wf.yaml\n")
    [result] = run_eval(load_eval(tmp_path / "eval.yaml"), store=Store(tmp_path / "db.sqlite"))
    samples = {s.id: s for s in result.samples}
    assert len(samples[ok].calls) == len(run.steps[0].metadata["model_calls"]) + sum(
        len(s.metadata.get("model_calls", ())) for s in run.steps[1:]
    )
    assert samples[ok].cost is None  # one span priced, the others not: unknown
    target = result.summary["tokens"]["target"]
    assert target["input"] is None and target["unreported_calls"] == 1
    answered = [c for s in samples.values() for c in s.calls if c.error is None]
    assert target["calls"] == len(answered)
    known = sum(c.input_tokens or 0 for s in samples.values() for c in s.calls)
    assert target["at_least"]["input"] == known > 0
