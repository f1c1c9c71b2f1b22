"""Where the command line sends spans: the global tracer provider if something installed one,
else OTLP when its exporter is installed, else the console."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from aieval.cli._print import err, labelled
from aieval.errors import ConfigError
from aieval.telemetry import INSTALL_HINT, require_otel

__all__ = [
    "OTLP_HINT",
    "Destination",
    "ExportOutcome",
    "cli_tracer_provider",
    "global_provider_is_set",
    "live_destination",
]

OTLP_HINT = "pip install opentelemetry-exporter-otlp"

# HTTP first: it needs no gRPC runtime and is what the meta package installs alongside gRPC.
_OTLP_MODULES = (
    ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "OTLP/HTTP"),
    ("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", "OTLP/gRPC"),
)


@dataclass(slots=True)
class Destination:
    """Where the command line sends spans.

    Attributes:
        provider: an SDK ``TracerProvider``; call ``shutdown()`` to flush it.
        label: ``"OTLP/HTTP"``, ``"OTLP/gRPC"`` or ``"console"``.
        hint: what to install for OTLP when it fell back to the console, else None.
    """

    provider: Any
    label: str
    hint: str | None = None
    outcome: ExportOutcome | None = None
    """What the exporter reported per batch: read it after ``shutdown()``."""


@dataclass(slots=True)
class ExportOutcome:
    """Spans the exporter sent and spans it could not (an unreachable or refusing collector)."""

    exported: int = 0
    failed: int = 0


def _counting(exporter: Any, outcome: ExportOutcome) -> Any:
    """``exporter`` wrapped so that every batch's result is counted into ``outcome``."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def export(self, spans: Any) -> Any:
            try:
                result = exporter.export(spans)
            except Exception:  # an exporter that raises has not exported the batch either
                outcome.failed += len(spans)
                raise
            if result == SpanExportResult.SUCCESS:
                outcome.exported += len(spans)
            else:
                outcome.failed += len(spans)
            return result

        def shutdown(self) -> None:
            exporter.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(exporter.force_flush(timeout_millis))

    return Counting()


def cli_tracer_provider(*, endpoint: str | None = None, console: bool = False) -> Destination:
    """An SDK tracer provider exporting over OTLP (``endpoint`` or the ``OTEL_*`` settings).

    Falls back to printing spans on the console, with an install hint, when no OTLP exporter
    is installed; ``console=True`` asks for the console outright.
    """
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        raise ConfigError(f"exporting spans needs the OpenTelemetry SDK: {INSTALL_HINT}") from None
    provider = TracerProvider(resource=Resource.create({"service.name": "aieval"}))
    exporter, label = (None, "console") if console else _otlp_exporter(endpoint)
    hint = None
    if exporter is None:
        if endpoint is not None and not console:
            raise ConfigError(f"--endpoint needs an OTLP exporter: {OTLP_HINT}")
        exporter = ConsoleSpanExporter()
        hint = None if console else f"no OTLP exporter installed; printing spans ({OTLP_HINT})"
    outcome = ExportOutcome()
    provider.add_span_processor(BatchSpanProcessor(_counting(exporter, outcome)))
    return Destination(provider, label, hint, outcome)


def global_provider_is_set() -> bool:
    """Whether something (``opentelemetry-instrument``, the app) installed a global provider."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def live_destination() -> Destination | None:
    """Where the spans of ``aieval run`` go: None when a global provider is set (the run's spans
    join it), else a new provider for OTLP or the console (its install hint printed)."""
    require_otel()
    if global_provider_is_set():
        return None
    destination = cli_tracer_provider()
    if destination.hint:
        err.print(labelled("telemetry:", "yellow", destination.hint), soft_wrap=True)
    return destination


def _otlp_exporter(endpoint: str | None) -> tuple[Any, str]:
    for module_name, label in _OTLP_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if endpoint is not None and label == "OTLP/HTTP" and not endpoint.endswith("/v1/traces"):
            # like OTEL_EXPORTER_OTLP_ENDPOINT, --endpoint names the collector, not the path
            endpoint = endpoint.rstrip("/") + "/v1/traces"
        options = {"endpoint": endpoint} if endpoint is not None else {}
        return module.OTLPSpanExporter(**options), label
    return None, "console"
