"""Emit a run as OpenTelemetry spans (run, sample, model calls) timed from recorded latencies."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from aieval.errors import ConfigError
from aieval.telemetry._attributes import (
    RunHeader,
    call_attributes,
    evaluation_events,
    layout,
    run_end_attributes,
    run_start_attributes,
    sample_attributes,
)

__all__ = ["INSTALL_HINT", "RunSpans", "require_otel"]

log = logging.getLogger("aieval")

INSTALL_HINT = "pip install 'aieval[otel]'"
_SCOPE = "aieval"


def require_otel() -> ModuleType:
    """``opentelemetry.trace``, or a :class:`ConfigError` saying which extra to install."""
    try:
        from opentelemetry import trace
    except ImportError:
        raise ConfigError(
            f"telemetry needs the OpenTelemetry API and SDK: {INSTALL_HINT}"
        ) from None
    return trace


class RunSpans:
    """The spans of one run, live (as samples finish) or replayed from the store.

    The run span opens at construction; each :meth:`sample` emits a finished sample's span with
    one child span per model call; :meth:`finish` closes the run span.
    """

    def __init__(self, header: RunHeader, start_s: float, tracer_provider: Any = None) -> None:
        trace = require_otel()
        from aieval._version import __version__

        self._trace = trace
        self._header = header
        self._tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider=tracer_provider)
        self._run = self._tracer.start_span(
            "aieval.run",
            kind=trace.SpanKind.INTERNAL,
            attributes=run_start_attributes(header),
            start_time=int(start_s * 1e9),
        )
        self._context = trace.set_span_in_context(self._run)
        self._failed_once = False

    def sample(self, record: Any, end_s: float) -> None:
        """Emit a finished sample's span and its model calls; never raises into the run."""
        try:
            self._emit_sample(record, end_s)
        except Exception:  # a telemetry bug must not fail an evaluation
            if not self._failed_once:
                self._failed_once = True
                log.warning("telemetry: could not emit sample %s", record.id, exc_info=True)

    def finish(
        self,
        status: str,
        summary: Mapping[str, Any] | None,
        error: str | None,
        end_s: float | None = None,
    ) -> None:
        """Close the run span; a status other than ``completed`` marks it as an error."""
        try:
            self._run.set_attributes(run_end_attributes(status, summary, error))
            if status != "completed":
                self._set_error(self._run, error or status)
        except Exception:  # as for samples: report it, still end the span, never fail the run
            log.warning("telemetry: could not describe the end of the run", exc_info=True)
        self._run.end(end_time=None if end_s is None else int(end_s * 1e9))

    def _emit_sample(self, record: Any, end_s: float) -> None:
        trace = self._trace
        timing = layout(record, end_s)
        span = self._tracer.start_span(
            "aieval.sample",
            context=self._context,
            kind=trace.SpanKind.INTERNAL,
            attributes=sample_attributes(self._header, record),
            start_time=timing.start_ns,
        )
        failed = dict(record.errors)
        if failed:
            self._set_error(span, "; ".join(f"{k}: {v}" for k, v in failed.items()))
        child_context = trace.set_span_in_context(span)
        for item in timing.calls:
            call = item.call
            child = self._tracer.start_span(
                f"chat {call.model}" if call.model else "chat",
                context=child_context,
                kind=trace.SpanKind.CLIENT,
                attributes=call_attributes(call),
                start_time=item.start_ns,
            )
            if call.error:
                self._set_error(child, call.error)
            child.end(end_time=item.end_ns)
        for name, attributes in evaluation_events(record):
            span.add_event(name, attributes=attributes, timestamp=timing.end_ns)
        span.end(end_time=timing.end_ns)

    def _set_error(self, span: Any, description: str) -> None:
        status = self._trace.Status(self._trace.StatusCode.ERROR, description[:1000])
        span.set_status(status)
