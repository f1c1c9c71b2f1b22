"""OpenTelemetry for runs: whether spans are wanted (the ``otel`` observer emits them)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["telemetry_from_env", "telemetry_wanted"]


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
