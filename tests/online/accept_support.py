"""Issue 44's acceptance tests: ``aieval serve --online rules.yaml`` served on loopback, traces
sent by the OpenTelemetry SDK's own exporter, and the status checked to add up."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from tests.support.cli import Cli
from tests.support.server import LiveServer

from aieval.online import OnlineService

__all__ = [
    "TOKEN",
    "Served",
    "export_traces",
    "served",
    "status",
    "status_adds_up",
    "subprocess_serve",
]

TOKEN = "online-accept-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Served:
    """A server started by ``aieval serve --online``, served in this process."""

    app: FastAPI
    live: LiveServer
    db: Path

    @property
    def url(self) -> str:
        return self.live.url

    def cycle(self) -> None:
        """One full cycle of the server's online scoring, begun now and ended."""
        service: OnlineService = self.app.state.online
        assert service.cycle_now(timeout=120), "the online service did not cycle"


@contextmanager
def served(
    in_process: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rules: str
) -> Iterator[Served]:
    """``aieval serve --db runs.db --token ... --online rules.yaml`` run by the command's own
    code, its app then served on 127.0.0.1 (port 0) in this process."""
    path = tmp_path / "rules.yaml"
    path.write_text(rules)
    db = tmp_path / "runs.db"
    apps: list[FastAPI] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: apps.append(app))
    done = in_process(
        "serve", "--db", str(db), "--token", TOKEN, "--online", str(path), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    (app,) = apps
    try:
        with LiveServer(app) as live:
            yield Served(app, live, db)
    finally:
        app.state.manager.shutdown()
        app.state.store.close()


def export_traces(url: str, n: int, *, service: str = "shop", complete: bool = True) -> list[str]:
    """Send ``n`` traces (a root span ``app`` and a tool call under it) through the SDK's OTLP
    HTTP exporter to ``url``; without ``complete`` the roots never end, so only the children
    are exported. Answers the trace ids (32 hex digits), in order."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers=AUTH, timeout=60)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=200))
    tracer = provider.get_tracer("accept")
    ids = []
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order"}
    for _ in range(n):
        root = tracer.start_span("app")
        with (
            trace.use_span(root, end_on_exit=complete),
            tracer.start_as_current_span("execute_tool get_order", attributes=attributes),
        ):
            pass
        ids.append(format(root.get_span_context().trace_id, "032x"))
    assert provider.force_flush(120_000), "the exporter did not flush"
    provider.shutdown()
    return ids


def status(url: str) -> dict[str, Any]:
    """``GET /api/online/status``."""
    answer = httpx.get(f"{url}/api/online/status", headers=AUTH, timeout=60)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def status_adds_up(body: dict[str, Any]) -> dict[str, Counter[str]]:
    """Check that every rule's and window's counts add up, nothing pending or claimed, and
    answer each rule's final counts (``scored`` and the skip reasons present)."""
    final: dict[str, Counter[str]] = {}
    for rule in body["rules"]:
        groups = [rule["counts"], *(w["counts"] for w in rule["windows"])]
        for counts in groups:
            skipped = sum(counts["skipped"].values())
            assert counts["skipped_total"] == skipped, counts
            assert counts["matched"] == counts["scored"] + skipped, counts
            assert (counts["pending"], counts["claimed"]) == (0, 0), counts
            assert counts["adds_up"] is True
        assert rule["counts"]["matched"] == sum(w["counts"]["matched"] for w in rule["windows"])
        counts = rule["counts"]
        final[rule["name"]] = Counter(
            {"scored": counts["scored"], **{k: v for k, v in counts["skipped"].items() if v}}
        )
    return final


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def subprocess_serve(db: Path, rules: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A real ``aieval serve --online`` process on a free loopback port, ready; killed after."""
    port = _free_port()
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    command = [sys.executable, "-m", "aieval", "serve", "--db", str(db), "--port", str(port)]
    command += ["--token", TOKEN, "--online", str(rules)]
    proc = subprocess.Popen(command, cwd=rules.parent, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # generous: a busy machine starts it slowly
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                httpx.get(f"{url}/api/online/rules", headers=AUTH, timeout=2.0)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.05)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)
