"""Spans of real runs, captured with the SDK's in-memory exporter: live and replayed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from tests.support.openai_server import OpenAIServer, Reply, Status
from tests.support.workflows import DEFINITION, SCORES, make_run

from aieval import run
from aieval.providers import OpenAIProvider
from aieval.scorers import exact_match, llm_judge
from aieval.telemetry import export_run
from aieval.workflows import WorkflowRun

ROWS = [{"id": f"q{i}", "prompt": f"say {i}", "expected": f"answer {i}"} for i in range(6)]
FAILING = "q3"


class Capture:
    """A tracer provider whose finished spans can be read back."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]


@pytest.fixture
def capture() -> Iterator[Capture]:
    found = Capture()
    yield found
    found.provider.shutdown()


def respond(body: dict[str, Any]) -> Any:
    text = body["messages"][-1]["content"]
    if "Reward" in json.dumps(body["messages"]):  # the judge
        return Reply(json.dumps({"score": 8, "reason": "close enough"}), usage=(40, 6))
    n = text.split()[-1]
    if f"q{n}" == FAILING:
        return Status(400, {"error": {"message": "bad request"}})
    return Reply(f"answer {n}", usage=(5, 2), model="target-2026")


def live_run(server: OpenAIServer, store: Any, capture: Capture, **options: Any) -> Any:
    server.responder = respond
    judge = llm_judge(
        "Reward answers that match the expected answer.",
        provider=OpenAIProvider(server.base_url, api_key="k", name="judge-endpoint"),
        model="judge-model",
        name="judge",
    )
    return run(
        name="traced",
        dataset=ROWS,
        scorers=[exact_match, judge],
        provider="openai-compatible",
        base_url=server.base_url,
        model="target-model",
        retries=0,
        store=store,
        tracer_provider=capture.provider,
        **options,
    )


def test_span_tree_run_samples_calls(
    openai_server: OpenAIServer, tmp_path: Path, capture: Capture
) -> None:
    result = live_run(openai_server, tmp_path / "runs.db", capture)
    (root,) = capture.named("aieval.run")
    samples = capture.named("aieval.sample")
    assert root.parent is None and len(samples) == len(ROWS)
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in samples)
    assert {s.context.trace_id for s in capture.spans} == {root.context.trace_id}
    by_id = {s.attributes["aieval.example.id"]: s for s in samples}
    for sample_id, span in by_id.items():
        calls = [
            c
            for c in capture.spans
            if c.parent is not None and c.parent.span_id == span.context.span_id
        ]
        purposes = [c.attributes["aieval.call.purpose"] for c in calls]
        # the failed target call has no judge call after it
        assert purposes == (["target"] if sample_id == FAILING else ["target", "judge:judge"])
        assert all(c.kind is SpanKind.CLIENT for c in calls)
        assert all(span.start_time <= c.start_time <= c.end_time <= span.end_time for c in calls)
    assert root.attributes["aieval.run.id"] == result.id
    assert root.attributes["aieval.samples"] == len(ROWS)
    assert root.attributes["aieval.pass_rate"] == pytest.approx(result.pass_rate)
    assert root.attributes["aieval.metric.exact_match"] == pytest.approx(
        result.metrics["exact_match"]
    )


def test_sample_and_call_attributes(
    openai_server: OpenAIServer, tmp_path: Path, capture: Capture
) -> None:
    result = live_run(openai_server, tmp_path / "runs.db", capture)
    stored = {s.id: s for s in result.samples}
    span = next(
        s for s in capture.named("aieval.sample") if s.attributes["aieval.example.id"] == "q1"
    )
    attrs = span.attributes
    assert attrs["aieval.score.exact_match"] == stored["q1"].scores["exact_match"].value == 1.0
    assert attrs["aieval.score.judge"] == pytest.approx(stored["q1"].scores["judge"].value)
    assert attrs["aieval.passed"] is True and attrs["aieval.weighted_score"] == pytest.approx(90.0)
    assert attrs["gen_ai.request.model"] == "target-model"
    assert attrs["gen_ai.response.model"] == "target-2026"
    assert attrs["gen_ai.provider.name"] == "openai-compatible"
    assert attrs["aieval.usage.input_tokens"] == 45 and attrs["aieval.usage.output_tokens"] == 8
    events = {e.attributes["gen_ai.evaluation.name"]: e for e in span.events}
    assert set(events) == {"exact_match", "judge"}
    assert (
        events["judge"].attributes["gen_ai.evaluation.explanation"]
        == stored["q1"].scores["judge"].reason
    )
    calls = [
        c
        for c in capture.spans
        if c.parent is not None and c.parent.span_id == span.context.span_id
    ]
    target, judge = calls
    assert target.name == "chat target-2026" and judge.name == "chat judge-model"
    assert target.attributes["gen_ai.operation.name"] == "chat"
    assert target.attributes["gen_ai.usage.input_tokens"] == 5
    assert judge.attributes["gen_ai.usage.output_tokens"] == 6
    assert judge.attributes["gen_ai.provider.name"] == "judge-endpoint"
    latency = stored["q1"].calls[0].latency_s
    assert (target.end_time - target.start_time) == int(latency * 1e9)


def test_failed_sample_has_error_status(
    openai_server: OpenAIServer, tmp_path: Path, capture: Capture
) -> None:
    live_run(openai_server, tmp_path / "runs.db", capture)
    samples = {s.attributes["aieval.example.id"]: s for s in capture.named("aieval.sample")}
    failed = samples[FAILING]
    assert failed.status.status_code is StatusCode.ERROR
    assert "ProviderHTTPError" in (failed.status.description or "")
    assert failed.attributes["error.type"] == "ProviderHTTPError"
    assert (
        failed.attributes["aieval.passed"] is False
        and failed.attributes["aieval.weighted_score"] == 0.0
    )
    (call,) = [
        c
        for c in capture.spans
        if c.parent is not None and c.parent.span_id == failed.context.span_id
    ]
    assert (
        call.status.status_code is StatusCode.ERROR
        and call.attributes["error.type"] == "ProviderHTTPError"
    )
    ok = [s for k, s in samples.items() if k != FAILING]
    assert all(s.status.status_code is StatusCode.UNSET for s in ok)


def shape(spans: list[ReadableSpan]) -> list[Any]:
    """Spans without their ids and wall-clock times: names, tree, attributes, events, durations."""
    names = {s.context.span_id: s for s in spans}
    out = []
    for span in spans:
        parent = names[span.parent.span_id] if span.parent is not None else None
        key = span.attributes.get("aieval.example.id") or span.attributes.get("aieval.call.purpose")
        parent_key = (
            None if parent is None else parent.attributes.get("aieval.example.id") or parent.name
        )
        out.append(
            (
                span.name,
                key,
                parent_key,
                span.kind,
                span.status.status_code,
                dict(span.attributes),
                [(e.name, dict(e.attributes)) for e in span.events],
                None if span.name == "aieval.run" else span.end_time - span.start_time,
            )
        )
    return sorted(out, key=repr)


def test_replay_emits_the_same_spans_as_the_live_run(
    openai_server: OpenAIServer, tmp_path: Path, capture: Capture
) -> None:
    result = live_run(openai_server, tmp_path / "runs.db", capture)
    live = capture.spans
    capture.exporter.clear()
    assert export_run(tmp_path / "runs.db", result.id, capture.provider) == len(ROWS)
    replayed = capture.spans
    assert len(replayed) == len(live) == 1 + len(ROWS) + 2 * len(ROWS) - 1
    assert shape(replayed) == shape(live)
    (live_root,) = [s for s in live if s.name == "aieval.run"]
    (root,) = [s for s in replayed if s.name == "aieval.run"]
    assert root.start_time == live_root.start_time
    assert abs(root.end_time - live_root.end_time) < 5e9


def test_graded_workflow_samples_carry_grade_and_gate_failures(
    tmp_path: Path, capture: Capture
) -> None:
    def workflow(example: Any) -> WorkflowRun:
        broken = example.id == "b"
        return WorkflowRun.from_dict(
            make_run(
                final_output={} if broken else {"report": {"issues": [1]}},
                metadata={"scores": dict(SCORES)},
            )
        )

    rows = [
        {"id": "a", "input": {"code_file": "a.py"}},
        {"id": "b", "input": {"code_file": "b.py"}},
    ]
    result = run(
        name="wf",
        dataset=rows,
        scorers=[],
        target=workflow,
        workflow=DEFINITION,
        store=tmp_path / "wf.db",
        tracer_provider=capture.provider,
    )
    spans = {s.attributes["aieval.example.id"]: s for s in capture.named("aieval.sample")}
    evaluations = {s.id: s.verdict.workflow for s in result.samples}
    for sample_id, span in spans.items():
        ev = evaluations[sample_id]
        assert span.attributes["aieval.grade"] == ev["grade"]
        assert span.attributes["aieval.weighted_score"] == pytest.approx(ev["weighted_score"])
        assert list(span.attributes["aieval.gate_failures"]) == [
            g["name"] for g in ev["gate_failures"]
        ]
        assert span.attributes["aieval.passed"] is ev["passed"]
    assert spans["b"].attributes["aieval.gate_failure_count"] >= 1
    assert spans["a"].attributes["aieval.gate_failure_count"] == 0
    (root,) = capture.named("aieval.run")
    grades = result.summary.evaluation.grades
    assert {g: root.attributes[f"aieval.grades.{g}"] for g in grades} == grades


def test_in_memory_run_is_traced_and_telemetry_false_wins(capture: Capture) -> None:
    rows = [{"id": "x", "prompt": "p", "expected": "y", "prediction": "y"}]
    run(
        name="mem",
        dataset=rows,
        scorers=[exact_match],
        store=False,
        telemetry=False,
        tracer_provider=capture.provider,
    )
    assert capture.spans == []
    result = run(
        name="mem",
        dataset=rows,
        scorers=[exact_match],
        store=False,
        tracer_provider=capture.provider,
    )
    (root,) = capture.named("aieval.run")
    assert (
        root.attributes["aieval.run.id"] == result.id
        and root.attributes["aieval.dataset.examples"] == 1
    )
    (sample,) = capture.named("aieval.sample")
    assert sample.attributes["aieval.score.exact_match"] == 1.0


def test_a_failing_run_ends_its_run_span_with_error(capture: Capture) -> None:
    def target(example: Any) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(
            name="stop",
            dataset=[{"id": "a", "prompt": "p"}],
            scorers=[exact_match],
            target=target,
            store=False,
            tracer_provider=capture.provider,
        )
    (root,) = capture.named("aieval.run")
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["aieval.run.status"] in ("failed", "interrupted")


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        cwd=Path(__file__).resolve().parents[2],
    )


def test_importing_aieval_does_not_import_opentelemetry() -> None:
    done = python(
        "import sys, aieval, aieval.telemetry, aieval.runner, aieval.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_the_extra_telemetry_is_a_config_error_with_the_install_hint() -> None:
    done = python(
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"  # as if the extra were not installed
        "from aieval import run\n"
        "from aieval.errors import ConfigError\n"
        "from aieval.telemetry import export_run\n"
        "rows = [{'prompt': 'p', 'prediction': 'y'}]\n"
        "for call in (lambda: run(name='n', dataset=rows, scorers=['exact_match'], store=False,"
        " telemetry=True), lambda: export_run(sys.argv[0], 'x')):\n"
        "    try:\n"
        "        call()\n"
        "    except ConfigError as exc:\n"
        "        print(exc)\n"
        "print(run(name='n', dataset=rows, scorers=['exact_match'], store=False).status)\n",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and lines[2] == "completed"
    assert all("pip install 'aieval[otel]'" in line for line in lines[:2])


def test_env_variable_uses_the_global_tracer_provider() -> None:
    done = python(
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
        "exporter = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n"
        "from aieval import run\n"
        "rows = [{'prompt': 'p', 'prediction': 'y', 'expected': 'y'}] * 3\n"
        "run(name='n', dataset=rows, scorers=['exact_match'], store=False)\n"
        "print(sorted(s.name for s in exporter.get_finished_spans()))\n",
        AIEVAL_OTEL="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["aieval.run"] + ["aieval.sample"] * 3)


def test_a_telemetry_bug_is_logged_once_and_never_fails_the_run(
    capture: Capture, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import aieval.telemetry._spans as spans_module

    def broken(*_: Any) -> Any:
        raise RuntimeError("attribute bug")

    monkeypatch.setattr(spans_module, "sample_attributes", broken)
    rows = [{"id": f"x{i}", "prompt": "p", "expected": "y", "prediction": "y"} for i in range(3)]
    result = run(
        name="bug",
        dataset=rows,
        scorers=[exact_match],
        store=False,
        tracer_provider=capture.provider,
    )
    assert result.status == "completed" and result.pass_rate == 1.0
    warnings = [r for r in caplog.records if "telemetry: could not emit sample" in r.getMessage()]
    assert len(warnings) == 1
    (root,) = capture.named("aieval.run")
    assert root.attributes["aieval.samples"] == 3
