"""OpenTelemetry export of runs: spans per run, sample and model call (extra ``otel``).

Importing this package does not import OpenTelemetry; using it without the extra raises a
:class:`~aieval.errors.ConfigError` that says ``pip install 'aieval[otel]'``.
"""

from aieval.telemetry._attributes import RunHeader
from aieval.telemetry._export import export_run
from aieval.telemetry._spans import INSTALL_HINT, RunSpans, require_otel

__all__ = ["INSTALL_HINT", "RunHeader", "RunSpans", "export_run", "require_otel"]
