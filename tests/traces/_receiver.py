"""A loopback OTLP/HTTP trace receiver writing what it receives as the OpenTelemetry Collector's
file exporter does: OTLP/JSON, one ``ExportTraceServiceRequest`` per line (hex ids), and the
same requests as length-prefixed protobuf messages."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

__all__ = ["OtlpReceiver", "to_collector_json"]

_IDS = ("traceId", "spanId", "parentSpanId")


def to_collector_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The request as the collector's JSON marshaler writes it (ids in hex, not base64)."""
    data = MessageToDict(request)
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in _IDS:
                    if key in span:
                        span[key] = _hex(span[key])
                for link in span.get("links", []):
                    for key in _IDS:
                        if key in link:
                            link[key] = _hex(link[key])
    return data


def _hex(value: str) -> str:
    import base64

    return base64.b64decode(value).hex()


class OtlpReceiver:
    """Use as a context manager; ``endpoint`` is the ``/v1/traces`` URL for the exporter.

    Attributes:
        json_file: the OTLP/JSON lines file written.
        proto_file: the length-prefixed protobuf file written.
        requests: how many export requests arrived.
    """

    def __init__(self, folder: Path) -> None:
        self.json_file = folder / "traces.jsonl"
        self.proto_file = folder / "traces.pb"
        self.requests = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.write(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1/traces"

    def write(self, request: ExportTraceServiceRequest) -> None:
        with self._lock:
            with self.json_file.open("a", encoding="utf-8") as out:
                out.write(json.dumps(to_collector_json(request), separators=(",", ":")) + "\n")
            body = request.SerializeToString()
            with self.proto_file.open("ab") as out:
                out.write(len(body).to_bytes(4, "big") + body)
            self.requests += 1

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
