"""``aieval online``: the online scoring rules a server keeps (``aieval online rules``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._options import DbOption, existing_store
from aieval.cli._print import out, when
from aieval.errors import ConfigError

if TYPE_CHECKING:
    from aieval.online import OnlineRule
    from aieval.store import StoredRule

__all__ = ["online_app"]

online_app = typer.Typer(
    cls=HelpGroup,
    help="Online scoring: rules that score a sample of the traces a server receives.",
    no_args_is_help=True,
)


@online_app.command("rules", cls=HelpCommand)
def rules_command(
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """The online rules in the store: source (rules file or API), state, filter, sampling.
    A stored rule that no longer reads is listed as unreadable, with its error."""
    from aieval.online import rule_of

    with existing_store(db) as store:
        rows = store.online_rules()
    rules: list[tuple[StoredRule, OnlineRule | ConfigError]] = []
    for row in rows:
        try:
            rules.append((row, rule_of(row)))
        except ConfigError as exc:  # one bad rule hides none of the others
            rules.append((row, exc))
    if as_json:
        listed = [_json_item(row, rule) for row, rule in rules]
        out.print_json(json.dumps({"rules": listed}), ensure_ascii=True)
        return
    if not rules:
        out.print("no online rules; give them with `aieval serve --online rules.yaml`")
        return
    table = Table(title="online rules", title_justify="left")
    for column in ("rule", "source", "state", "filter", "sampling", "window", "updated"):
        table.add_column(column, justify="right" if column == "sampling" else "left")
    for row, rule in rules:
        if isinstance(rule, ConfigError):
            problem = f"cannot be read: {rule}; fix or delete it"
            table.add_row(
                printable(row.name), row.source, "unreadable", printable(problem), "", "",
                when(row.updated_at),
            )  # fmt: skip
            continue
        flt = rule.filter
        parts = [f"service={flt.service_name}"] if flt.service_name else []
        parts += [f"span={flt.span_name}"] if flt.span_name else []
        parts += [a.key for a in flt.attributes]
        table.add_row(
            printable(rule.name),
            row.source,
            "paused" if rule.paused else "active",
            printable(", ".join(parts) or "every trace"),
            f"{rule.sampling_rate:g}",
            rule.window,
            when(row.updated_at),
        )
    out.print(table)


def _json_item(row: StoredRule, rule: OnlineRule | Exception) -> dict[str, Any]:
    """A listed rule as JSON: its stored spec, and ``error`` when it does not read."""
    try:
        spec: Any = json.loads(row.spec)
    except ValueError:
        spec = row.spec  # not JSON: shown as stored
    item = {"name": row.name, "source": row.source, "paused": row.paused, "rule": spec}
    return item if not isinstance(rule, Exception) else {**item, "error": str(rule)}
