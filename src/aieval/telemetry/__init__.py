"""OpenTelemetry export of runs: spans per run, sample and model call (extra ``otel``).

Importing this package does not import OpenTelemetry; using it without the extra raises a
:class:`~aieval.errors.ConfigError` that says ``pip install 'aieval[otel]'``. Public names are
imported on first use, so a run that loads the ``otel`` observer plug-in without asking for
telemetry imports no more than that plug-in.
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports

if TYPE_CHECKING:
    from aieval.telemetry._attributes import RunHeader
    from aieval.telemetry._export import export_run
    from aieval.telemetry._observer import SpanObserver
    from aieval.telemetry._spans import INSTALL_HINT, RunSpans, require_otel

__all__ = ["INSTALL_HINT", "RunHeader", "RunSpans", "SpanObserver", "export_run", "require_otel"]

_EXPORTS = {
    "RunHeader": "aieval.telemetry._attributes",
    "export_run": "aieval.telemetry._export",
    "SpanObserver": "aieval.telemetry._observer",
    "INSTALL_HINT": "aieval.telemetry._spans",
    "RunSpans": "aieval.telemetry._spans",
    "require_otel": "aieval.telemetry._spans",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
