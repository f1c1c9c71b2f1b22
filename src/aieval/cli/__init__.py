"""The ``aieval`` command line: run evals, list and show stored runs, report and compare them.

One module per command group (``run``; ``runs``/``show``; ``report``/``compare``/``diff``/
``schema``; ``calibrate``/``rubric``; ``export-otel``; ``serve``; ``code``/``code-report``),
the options and checks they share in one place, the printers in another. The commands use the
public API of the other packages only, and import the heavy ones when they run, so
``aieval --help`` loads typer, Rich and the store module only.
"""

from aieval.cli._app import app, main
from aieval.cli._exits import EXIT_ERRORS, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE

__all__ = ["EXIT_ERRORS", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "app", "main"]
