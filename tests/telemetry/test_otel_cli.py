"""``aieval export-otel`` and ``aieval run`` with telemetry, against a real OTLP/HTTP receiver."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from aieval import Store, run

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    {"id": f"r{i}", "prompt": f"p{i}", "expected": "yes", "prediction": "yes" if i % 2 else "no"}
    for i in range(5)
]


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1 that keeps every exported span."""

    def __init__(self, status: int = 200) -> None:
        self.spans: list[Any] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest.FromString(body)
                receiver.paths.append(self.path)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        receiver.spans.extend(scope.spans)
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def names(self) -> list[str]:
        return sorted(span.name for span in self.spans)

    def attributes(self, span: Any) -> dict[str, Any]:
        out = {}
        for item in span.attributes:
            value = item.value
            out[item.key] = getattr(value, value.WhichOneof("value"))
        return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.server.shutdown()
    found.server.server_close()


def aieval(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    environ.pop("AIEVAL_OTEL", None)
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )


def test_export_otel_sends_a_stored_run_over_otlp(tmp_path: Path, receiver: Receiver) -> None:
    result = run(name="stored", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "a.db")
    done = aieval("export-otel", "stored", "--db", "a.db", "--endpoint", receiver.url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "5 sample spans (OTLP/HTTP)" in done.stderr
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    assert receiver.names() == ["aieval.run"] + ["aieval.sample"] * 5
    samples = {
        receiver.attributes(s)["aieval.example.id"]: receiver.attributes(s)
        for s in receiver.spans
        if s.name == "aieval.sample"
    }
    stored = {s.id: s for s in result.samples}
    assert {k: v["aieval.score.exact_match"] for k, v in samples.items()} == {
        k: s.scores["exact_match"].value for k, s in stored.items()
    }
    (root,) = [s for s in receiver.spans if s.name == "aieval.run"]
    assert receiver.attributes(root)["aieval.run.id"] == result.id


def test_export_otel_fails_loudly_when_the_collector_refuses(tmp_path: Path) -> None:
    """A collector answering 400 received nothing: no "exported" line, exit 1."""
    refusing = Receiver(status=400)
    try:
        run(name="stored", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "a.db")
        done = aieval(
            "export-otel", "stored", "--db", "a.db", "--endpoint", refusing.url, cwd=tmp_path
        )
    finally:
        refusing.server.shutdown()
        refusing.server.server_close()
    assert done.returncode == 1, done.stderr
    assert "6 of 6 spans were not exported (OTLP/HTTP)" in done.stderr
    assert "exported run" not in done.stderr


def test_export_otel_falls_back_to_the_console_with_a_hint(tmp_path: Path) -> None:
    run(name="stored", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "a.db")
    blocker = tmp_path / "block"
    blocker.mkdir()
    # shadow the installed OTLP exporters, as if opentelemetry-exporter-otlp were absent
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "for name in ('opentelemetry.exporter.otlp.proto.http.trace_exporter',"
        " 'opentelemetry.exporter.otlp.proto.grpc.trace_exporter'):\n"
        "    sys.modules[name] = None\n"
    )
    done = aieval(
        "export-otel",
        "stored",
        "--db",
        "a.db",
        cwd=tmp_path,
        PYTHONPATH=f"{blocker}{os.pathsep}{ROOT}",
    )
    assert done.returncode == 0, done.stderr
    assert "pip install opentelemetry-exporter-otlp" in done.stderr and "(console)" in done.stderr
    assert done.stdout.count('"name": "aieval.sample"') == 5


def test_export_otel_unknown_run_is_a_usage_error(tmp_path: Path) -> None:
    run(name="stored", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "a.db")
    done = aieval("export-otel", "nope", "--db", "a.db", "--console", cwd=tmp_path)
    assert done.returncode == 2 and "no run with id or name 'nope'" in done.stderr


def test_eval_file_setting_turns_live_telemetry_on(tmp_path: Path, receiver: Receiver) -> None:
    import json

    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "eval.yaml").write_text(
        "name: live\ndataset: data.jsonl\nscorers: [exact_match]\nsettings: {telemetry: true}\n"
    )
    done = aieval(
        "run",
        "eval.yaml",
        "--db",
        "a.db",
        "-q",
        cwd=tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
    )
    assert done.returncode == 0, done.stderr
    assert receiver.names() == ["aieval.run"] + ["aieval.sample"] * 5
    (row,) = Store(tmp_path / "a.db").list_runs(name="live")
    (root,) = [s for s in receiver.spans if s.name == "aieval.run"]
    assert receiver.attributes(root)["aieval.run.id"] == row.id


def test_eval_file_setting_off_beats_the_environment(tmp_path: Path, receiver: Receiver) -> None:
    import json

    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "eval.yaml").write_text(
        "name: quiet\ndataset: data.jsonl\nscorers: [exact_match]\nsettings: {telemetry: false}\n"
    )
    done = aieval(
        "run",
        "eval.yaml",
        "--db",
        "a.db",
        "-q",
        cwd=tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        AIEVAL_OTEL="1",
    )
    assert done.returncode == 0, done.stderr
    assert receiver.spans == []
