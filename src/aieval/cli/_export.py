"""``aieval export-otel``: send a stored run to OpenTelemetry."""

from __future__ import annotations

from typing import Annotated

import typer

from aieval._terminal import printable
from aieval.cli._options import DbOption, RunRef, existing_store
from aieval.cli._print import err, labelled

__all__ = ["export_otel_command"]


def export_otel_command(
    run_ref: RunRef,
    endpoint: Annotated[
        str | None,
        typer.Option(help="OTLP collector URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT)."),
    ] = None,
    console: Annotated[
        bool, typer.Option("--console", help="Print the spans instead of sending them.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Send a stored run to OpenTelemetry as spans: run, samples, model calls."""
    from aieval.cli._tracing import cli_tracer_provider
    from aieval.telemetry import export_run

    store = existing_store(db)
    row = store.get_run(run_ref)
    destination = cli_tracer_provider(endpoint=endpoint, console=console)
    if destination.hint:
        err.print(labelled("telemetry:", "yellow", destination.hint), soft_wrap=True)
    try:
        count = export_run(store, row.id, destination.provider)
    finally:
        destination.provider.shutdown()
    outcome = destination.outcome
    if outcome is not None and outcome.failed:
        # the exporter logs why (connection refused, HTTP status); the command must not say
        # it exported what the collector never received
        err.print(
            labelled(
                "error:",
                "red",
                f"run {printable(row.id)}: {outcome.failed} of "
                f"{outcome.failed + outcome.exported} spans were not exported "
                f"({destination.label}); is the collector reachable at the endpoint?",
            ),
            soft_wrap=True,
        )
        raise typer.Exit(1)
    err.print(
        f"exported run {printable(row.id)}: 1 run span and {count} sample spans "
        f"({destination.label})",
        highlight=False,
        soft_wrap=True,
    )
