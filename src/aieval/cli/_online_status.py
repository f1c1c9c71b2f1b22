"""``aieval online status``: per online rule, what became of its matched traces by window
(matched = scored + skipped by reason + pending + claimed), the spend against the budget, the
lag, and a loud line for a rule whose traces are not being processed.

The ``online`` group (``cli/_online.py``) gets its ``status`` command here.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from aieval._terminal import printable
from aieval.cli._exits import EXIT_FAILED
from aieval.cli._help import HelpCommand
from aieval.cli._online import online_app
from aieval.cli._options import existing_store
from aieval.cli._print import out, when

if TYPE_CHECKING:
    from aieval.online import (
        AlertStatus,
        OnlineStatus,
        RuleStatus,
        SkipReason,
        SpendStatus,
        WorkCounts,
    )

__all__ = ["online_status_command"]

_REASON_COLUMNS: tuple[tuple[SkipReason, str], ...] = (
    ("sampled_out", "sampled out"),
    ("budget_exhausted", "budget"),
    ("incomplete", "incomplete"),
    ("error", "error"),
)


def online_status_command(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            "--store",
            help="Store: an SQLite file, sqlite:///path or postgresql://user@host/db"
            " (default: $AIEVAL_DB or ./aieval.db).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the status as one JSON object.")
    ] = False,
) -> None:
    """Per rule and window: matched = scored + skipped by reason, spend against the budget,
    lag, alert incidents not delivered; a stalled rule says so. Exits 1 when a rule is stalled,
    its counts do not add up, or an alert's delivery failed past its first attempts or was given
    up."""
    from aieval.online import online_status

    with existing_store(db) as store:
        status = online_status(store, time.time())
    if as_json:
        typer.echo(json.dumps(status.to_dict(), indent=2))
    else:
        _print(status)
    if not status.adds_up or any(
        rule.stalled or any(a.alarming for a in rule.alerts) for rule in status.rules
    ):
        raise typer.Exit(EXIT_FAILED)


online_app.command("status", cls=HelpCommand)(online_status_command)


def _print(status: OnlineStatus) -> None:
    if not status.rules:
        out.print("no online rules; give them to `aieval serve --online rules.yaml`")
        return
    for rule in status.rules:
        _print_rule(rule)
    if status.unexamined:
        lag = (
            ""
            if status.unexamined_lag_s is None
            else f", the oldest waiting {_seconds(status.unexamined_lag_s)}"
        )
        out.print(
            Text(
                f"{status.unexamined:,} received traces not yet examined against the rules"
                f"{lag} (a count that grows: no server is examining)"
            )
        )
    if not status.adds_up:
        out.print(
            Text(
                "the counts do not add up (matched != scored + skipped + pending + claimed):"
                " the store holds a work item in a state no version writes",
                style="bold red",
            )
        )


def _print_rule(rule: RuleStatus) -> None:
    source = rule.source or "deleted"
    state = "paused" if rule.paused else "active"
    lag = "-" if rule.lag_s is None else _seconds(rule.lag_s)
    last = "never" if rule.last_finished_at is None else when(rule.last_finished_at)
    title = printable(
        f"rule {rule.name} · {source} · {state} · {rule.window} windows · lag {lag}"
        f" · last finished {last}"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("window")
    for column in ("matched", "scored", *(label for _, label in _REASON_COLUMNS)):
        table.add_column(column, justify="right")
    for column in ("pending", "claimed", "pass rate (95%)"):
        table.add_column(column, justify="right")
    for window in rule.windows:
        rate = "-"
        if window.pass_rate is not None and window.pass_low is not None:
            rate = (
                f"{window.pass_rate:.0%} [{window.pass_low:.0%}, {window.pass_high or 0:.0%}]"
                f" of {window.judged}"
            )
        table.add_row(printable(window.name), *_count_cells(window.counts), rate)
    table.add_row(Text("all", style="bold"), *_count_cells(rule.counts), "")
    out.print(table)
    out.print("  " + " · ".join(_spend_text(s) for s in rule.spend), highlight=False)
    for error in rule.errors:
        out.print(printable(f"  error x{error.count}: {error.message}"), highlight=False)
    if rule.stalled:
        out.print(
            Text.assemble(
                ("  STALLED: ", "bold red"), printable(f"rule {rule.name}: {rule.stalled_reason}")
            )
        )
    for alert in rule.alerts:
        _print_alert(rule.name, alert)


def _print_alert(rule: str, alert: AlertStatus) -> None:
    """A delivered incident on one plain line; an undelivered one loud, with its last error."""
    head = f"alert {alert.incident} of rule {rule} (opened {when(alert.opened_at)})"
    if alert.delivered_at is not None:
        out.print(printable(f"  {head}: delivered {when(alert.delivered_at)}"), highlight=False)
        return
    if alert.state == "abandoned":
        label, what = "ALERT ABANDONED: ", f"given up after {alert.attempts} attempts"
    else:
        nxt = "now" if alert.next_attempt_at is None else when(alert.next_attempt_at)
        label = "ALERT NOT DELIVERED: " if alert.alarming else "alert not delivered yet: "
        what = f"{alert.attempts} attempts, retried {nxt}"
    style = "bold red" if alert.alarming else "yellow"
    error = alert.last_error or "no attempt yet"
    line = printable(f"{head}: {what}; last error: {error}")
    out.print(Text.assemble(("  " + label, style), line))


def _count_cells(counts: WorkCounts) -> list[str]:
    claimed = str(counts.claimed)
    if counts.expired_claims:
        claimed += f" ({counts.expired_claims} expired)"
    return [
        str(counts.matched),
        str(counts.scored),
        *(str(counts.skipped[reason]) for reason, _ in _REASON_COLUMNS),
        str(counts.pending),
        claimed,
    ]


def _spend_text(spend: SpendStatus) -> str:
    def part(used: float, limit: float | None, unit: str, money: bool = False) -> str:
        shown = f"{used:.4g}" if money else f"{used:g}"
        return f"{shown} {unit}" + ("" if limit is None else f" of {limit:g}")

    text = (
        f"this {spend.period}: {part(spend.calls, spend.calls_limit, 'calls')},"
        f" {part(spend.tokens, spend.tokens_limit, 'tokens')},"
        f" cost {part(spend.cost, spend.cost_limit, '', money=True).strip()}"
    )
    return text + (" (budget reached)" if spend.exhausted else "")


def _seconds(value: float) -> str:
    """A lag: seconds under two minutes, else minutes, else hours."""
    if value < 120:
        return f"{value:.0f}s"
    if value < 7200:
        return f"{value / 60:.0f}m"
    return f"{value / 3600:.1f}h"
