"""Reading and grouping OTLP trace files: aieval's trace reader against protobuf's own decoders.

Usage: ``python bench/traces.py [--traces 5000] [--batch 512] [--repeat 3] [--pin]``

Makes agent traces with the OpenTelemetry SDK (a root, three ``invoke_agent`` spans, two
``chat`` spans each with token usage, a tool span, one plain span: 12 spans a trace), encodes
them with the OTLP exporter's own encoder in export batches of ``--batch`` spans (so traces
span several requests), and writes them as the collector's file exporter does: OTLP/JSON
lines with hex ids, and length-prefixed protobuf. Then times, in one single-threaded process
(``--pin``: pinned to one core, which on a busy machine only adds waiting):

- aieval reading and grouping by trace (``read_path`` + ``group``), and the full mapping to
  workflow runs (``iter_trace_runs``), on both files, and with grouping spilled to disk;
- the floors any reader pays: ``json.loads`` of every line, and protobuf's
  ``ParseFromString`` / ``json_format.Parse`` of every request (no grouping, no mapping).

Prints spans/s of wall time and of CPU time, the ratio of each to aieval's reading and
grouping, and where wall time went beyond the CPU: waiting for a core (the kernel's run-queue
delay, ``/proc/self/schedstat``) and blocked (I/O, page faults from disk, locks: the rest).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from aieval.traces import iter_trace_runs
from aieval.traces._files import read_path
from aieval.traces._group import group


def make_spans(traces: int) -> list[Any]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "bench-agents"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    for i in range(traces):
        with tracer.start_as_current_span("support workflow"):
            for agent in ("triage", "billing", "writer"):
                attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
                with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attrs):
                    for turn in range(2):
                        chat = {
                            "gen_ai.operation.name": "chat",
                            "gen_ai.request.model": "gpt-4o-mini",
                            "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                            "gen_ai.usage.input_tokens": 40 + turn + i % 7,
                            "gen_ai.usage.output_tokens": 10 + turn,
                            "gen_ai.response.finish_reasons": ("stop",),
                        }
                        with tracer.start_as_current_span("chat gpt-4o-mini", attributes=chat):
                            pass
                    if agent == "billing":
                        tool = {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "get_order",
                            "gen_ai.tool.call.id": f"call_{i}",
                            "gen_ai.tool.call.arguments": '{"order_id": "A1042"}',
                        }
                        with (
                            tracer.start_as_current_span("execute_tool get_order", attributes=tool),
                            tracer.start_as_current_span("cache lookup"),
                        ):
                            pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


def write_files(spans: list[Any], batch: int, folder: Path) -> tuple[Path, Path, list[bytes]]:
    json_file, proto_file = folder / "traces.jsonl", folder / "traces.pb"
    bodies = []
    with json_file.open("w") as out_json, proto_file.open("wb") as out_proto:
        for start in range(0, len(spans), batch):
            request = encode_spans(spans[start : start + batch])
            body = request.SerializeToString()
            bodies.append(body)
            out_proto.write(len(body).to_bytes(4, "big") + body)
            out_json.write(json.dumps(_hex_ids(MessageToDict(request)), separators=(",", ":")))
            out_json.write("\n")
    return json_file, proto_file, bodies


def _hex_ids(data: dict[str, Any]) -> dict[str, Any]:
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return data


def run_queue_wait() -> float:
    """Seconds this process has waited for a core (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/schedstat") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


@dataclass
class Timing:
    """The best run's wall and CPU time, and what the wall time was beyond the CPU time."""

    wall: float
    cpu: float
    waiting: float  # for a core
    blocked: float  # the rest: I/O, faults, locks
    spans: int


def best(fn: Callable[[], int], repeat: int) -> Timing:
    """The run with the best wall time (and the best CPU time of all runs: what one core
    spends, whatever else the machine runs)."""
    runs = []
    for _ in range(repeat):
        wall, cpu, wait = time.perf_counter(), time.process_time(), run_queue_wait()
        count = fn()
        cpu = time.process_time() - cpu
        wait = run_queue_wait() - wait
        wall = time.perf_counter() - wall
        runs.append(Timing(wall, cpu, wait, max(wall - cpu - wait, 0.0), count))
    fastest = min(runs, key=lambda r: r.wall)
    fastest.cpu = min(r.cpu for r in runs)
    return fastest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pin", action="store_true", help="pin the process to one core")
    args = parser.parse_args()
    if args.pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    spans = make_spans(args.traces)
    with tempfile.TemporaryDirectory() as tmp:
        json_file, proto_file, bodies = write_files(spans, args.batch, Path(tmp))
        lines = json_file.read_bytes().splitlines()
        mb = json_file.stat().st_size / 1e6

        def grouped(path: Path, limit: int = 500_000) -> Callable[[], int]:
            return lambda: group(read_path(path), limit).spans

        def mapped(path: Path) -> Callable[[], int]:
            return lambda: sum(r.metadata["trace"]["spans"] for r in iter_trace_runs(path))

        def json_loads() -> int:
            for line in lines:
                json.loads(line)
            return len(spans)

        def proto_parse() -> int:
            for body in bodies:
                ExportTraceServiceRequest().ParseFromString(body)
            return len(spans)

        def proto_json_parse() -> int:
            for line in lines:
                json_format.Parse(line, ExportTraceServiceRequest(), ignore_unknown_fields=True)
            return len(spans)

        cases = [
            ("aieval read + group, OTLP/JSON lines", grouped(json_file)),
            ("aieval read + group, OTLP/protobuf", grouped(proto_file)),
            (
                "aieval read + group, JSON, spilled to disk (10k spans held)",
                grouped(json_file, 10_000),
            ),
            ("aieval read + group + map to runs, OTLP/JSON lines", mapped(json_file)),
            ("aieval read + group + map to runs, OTLP/protobuf", mapped(proto_file)),
            ("floor: json.loads of every line (no grouping)", json_loads),
            ("floor: protobuf ParseFromString of every request (no grouping)", proto_parse),
            ("protobuf json_format.Parse of every line (no grouping)", proto_json_parse),
        ]
        print(
            f"{len(spans)} spans, {args.traces} traces, {len(bodies)} export requests, "
            f"JSON file {mb:.1f} MB, best of {args.repeat}, one thread"
            + (", pinned to one core" if args.pin else "")
        )
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        print(
            "| case | spans/s (wall) | spans per CPU second | wall: CPU / waiting for a core / "
            "blocked | this / aieval JSON read + group (CPU) |\n|---|---:|---:|---|---:|"
        )
        base = None
        for label, fn in cases:
            t = best(fn, args.repeat)
            assert t.spans == len(spans), (label, t.spans)
            rate = t.spans / t.cpu
            base = base or rate
            split = " / ".join(
                f"{100 * part / t.wall:.0f}%"
                for part in (t.wall - t.waiting - t.blocked, t.waiting, t.blocked)
            )
            print(
                f"| {label} | {t.spans / t.wall:,.0f} | {rate:,.0f} | {split} | "
                f"{rate / base:.2f}x |"
            )
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
