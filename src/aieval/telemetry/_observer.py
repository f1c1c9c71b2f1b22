"""Telemetry as a run observer: the built-in ``otel`` plug-in of ``aieval.observers``.

Every run loads this plug-in; it imports the span machinery only for a run that asks for
telemetry, so a run without it stays as light as before.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from aieval.core import ObserverOptions, RunFinish, RunStart, SampleRecord

if TYPE_CHECKING:
    from aieval.telemetry._spans import RunSpans

__all__ = ["SpanObserver", "observer"]


def observer(options: ObserverOptions) -> SpanObserver | None:
    """The run's span observer when it asked for telemetry, else ``None``.

    Raises:
        ConfigError: telemetry was asked for and the ``otel`` extra is not installed.
    """
    if not options.telemetry:
        return None
    from aieval.telemetry._spans import require_otel

    require_otel()
    return SpanObserver(options.tracer_provider)


class SpanObserver:
    """Emits a run as OpenTelemetry spans as it goes: run, each stored sample, model calls."""

    def __init__(self, tracer_provider: Any = None) -> None:
        self._tracer_provider = tracer_provider
        self._spans: RunSpans | None = None

    def on_start(self, run: RunStart) -> None:
        """Open the run span, with the run's fixed facts."""
        from aieval.telemetry._attributes import RunHeader
        from aieval.telemetry._spans import RunSpans

        header = RunHeader(
            id=run.id,
            name=run.name,
            model=run.model,
            provider=run.provider,
            dataset=run.dataset,
            dataset_hash=run.dataset_hash,
            n_examples=run.n_examples,
            git_sha=run.git_sha,
        )
        self._spans = RunSpans(header, run.started_at, self._tracer_provider)

    def on_sample(self, run: RunStart, sample: SampleRecord, done: int, total: int) -> None:
        """Emit the stored sample's span and its model calls."""
        if self._spans is not None:
            self._spans.sample(sample, time.time())

    def on_finish(self, run: RunStart, end: RunFinish) -> None:
        """Close the run span with how the run ended."""
        if self._spans is not None:
            self._spans.finish(end.status, end.summary, end.error)
