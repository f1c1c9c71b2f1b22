"""OpenTelemetry for runs: whether spans are wanted, and the run's span recorder."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from aieval.runner._prepare import Prepared

if TYPE_CHECKING:
    from aieval.telemetry._spans import RunSpans

__all__ = ["open_spans", "telemetry_from_env", "telemetry_wanted"]


def telemetry_wanted(telemetry: bool | None, tracer_provider: Any) -> bool:
    """``telemetry`` if given; else on with a tracer provider; else ``$AIEVAL_OTEL``."""
    if telemetry is not None:
        return telemetry
    if tracer_provider is not None:
        return True
    return telemetry_from_env()


def telemetry_from_env() -> bool:
    """Whether ``$AIEVAL_OTEL`` asks for spans (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get("AIEVAL_OTEL", "").strip().lower() in ("1", "true", "yes", "on")


def open_spans(prep: Prepared, started_wall: float, tracer_provider: Any) -> RunSpans:
    """The run's span recorder, with the stored run's header when there is a store."""
    from aieval.telemetry._attributes import RunHeader
    from aieval.telemetry._export import header_of
    from aieval.telemetry._spans import RunSpans

    if prep.db is not None:
        # the stored header, so a live run and its replay (export_run) carry the same facts
        row = prep.db.get_run(prep.run_id)
        header = header_of(row)
        started_wall = row.started_at if row.started_at is not None else started_wall
    else:
        spec = prep.spec
        header = RunHeader(
            prep.run_id,
            spec.name,
            spec.target.model,
            prep.provider_name,
            prep.data.source,
            prep.info.version,
            prep.info.count,
        )
    return RunSpans(header, started_wall, tracer_provider)
