"""``aieval review``: make review queues, show their progress, export and import labels."""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._options import DbOption, existing_store
from aieval.cli._print import out, when

if TYPE_CHECKING:
    from aieval.core import ReviewLabel
    from aieval.store import Store

__all__ = ["review_app"]

review_app = typer.Typer(
    cls=HelpGroup,
    help="Review queues: people label a judge's samples, blind, to check the judge.",
    no_args_is_help=True,
)


@review_app.command("create", cls=HelpCommand)
def create_command(
    runs: Annotated[list[str], typer.Argument(help="Runs (ids or names) judged by the scorer.")],
    scorer: Annotated[str, typer.Option("--scorer", help="The judge's scorer name.")],
    size: Annotated[int, typer.Option("--size", help="Items in the queue.", min=1)] = 50,
    reviewers: Annotated[
        int, typer.Option("--reviewers", help="Labels wanted per item.", min=1, max=20)
    ] = 2,
    selection: Annotated[
        str,
        typer.Option(
            "--selection",
            help="Ways and shares: uncertain (where a label narrows kappa most: near the"
            " threshold, samples disagreeing), stratified (every score bin, floored),"
            " random (control).",
        ),
    ] = "stratified=20,uncertain=80",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the selection.", min=0)] = 0,
    name: Annotated[str | None, typer.Option("--name", help="The queue's name.")] = None,
    db: DbOption = None,
) -> None:
    """Make a review queue from runs and the judge that scored them."""
    from aieval.judges import QueueRequest, build_queue, parse_mix

    mix = parse_mix(selection)
    with existing_store(db) as store:
        queue_id = build_queue(
            store,
            QueueRequest(
                runs=tuple(runs),
                scorer=scorer,
                size=size,
                reviewers=reviewers,
                mix=mix,
                seed=seed,
                name=name,
                created_by=_user(),
            ),
        )
        queue = store.review_queue(queue_id)
    out.print(
        printable(
            f"queue {queue.id} · {queue.name} · judge {queue.judge.label()} ·"
            f" {queue.items} items x {queue.reviewers} reviewers"
        ),
        highlight=False,
    )


def _user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment
        return None


@review_app.command("status", cls=HelpCommand)
def status_command(
    queue_ref: Annotated[
        str | None, typer.Argument(help="A queue (id or name); all of them if left out.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Progress of review queues, per queue and reviewer."""
    with existing_store(db) as store:
        queues = [store.review_queue(queue_ref)] if queue_ref else store.review_queues()
    if not queues:
        out.print("no review queues; make one with `aieval review create RUN --scorer NAME`")
        return
    table = Table(title="review queues", title_justify="left")
    for column in ("queue", "name", "judge", "created", "items", "complete", "labels", "by"):
        table.add_column(column, justify="right" if column in ("items", "complete") else "left")
    for q in queues:
        by = ", ".join(f"{who} {n}" for who, n in q.by_reviewer.items()) or "-"
        table.add_row(
            q.id,
            printable(q.name),
            printable(q.judge.label()),
            when(q.created_at),
            str(q.items),
            f"{q.complete}/{q.items}",
            f"{q.labels}/{q.items * q.reviewers}",
            printable(by),
        )
    out.print(table)


@review_app.command("export", cls=HelpCommand)
def export_command(
    queue_ref: Annotated[str, typer.Argument(help="A queue (id or name).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The JSONL file to write.")],
    db: DbOption = None,
) -> None:
    """Write a queue's labels to a JSONL file (one label per line)."""
    from aieval.judges import write_review_labels

    with existing_store(db) as store:
        queue = store.review_queue(queue_ref)
        labels = store.review_labels(queue=queue.id)
    n = write_review_labels(labels, output)
    out.print(printable(f"{n} labels of queue {queue.id} written to {output}"), highlight=False)


@review_app.command("import", cls=HelpCommand)
def import_command(
    labels_file: Annotated[Path, typer.Argument(help="A JSONL file of labels.")],
    db: DbOption = None,
) -> None:
    """Store labels from a JSONL file; labels already stored are left as they are."""
    from aieval.errors import ReviewError
    from aieval.judges import read_review_labels

    labels = read_review_labels(labels_file)
    with existing_store(db) as store:
        missing = store.missing_samples([(label.run_id, label.sample_id) for label in labels])
        if missing:
            shown = ", ".join(f"{run}/{sample}" for run, sample in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ReviewError(
                f"{labels_file}: {len(missing)} label(s) name samples this store does not hold:"
                f" {shown}{more}. Import the runs first (aieval push) or use their store (--db)"
            )
        unknown = _unknown_judges(store, labels)
        if unknown:
            shown = ", ".join(f"{judge} (run {run})" for judge, run in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise ReviewError(
                f"{labels_file}: label(s) name a judge their run has no scorer for: {shown}"
                f"{more}. A label's judge is the digest `aieval review export` writes; "
                "check the file is for these runs"
            )
        added = store.add_review_labels(labels)
    out.print(
        printable(f"{added} new labels stored, {len(labels) - added} already there"),
        highlight=False,
    )


def _unknown_judges(store: Store, labels: list[ReviewLabel]) -> list[tuple[str, str]]:
    """``(judge, run_id)`` of labels whose judge digest neither a queue nor a scorer of the
    label's run has (a label for no judge here would sit unread, or count for the wrong one)."""
    from aieval.core import JudgeKey

    known = {queue.judge.digest for queue in store.review_queues()}
    by_run: dict[str, set[str]] = {}
    unknown: dict[tuple[str, str], None] = {}
    for label in labels:
        if label.judge in known:
            continue
        if label.run_id not in by_run:
            config = store.get_run(label.run_id).config
            digests = set()
            for entry in config.get("scorers") or []:
                if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                    options = entry.get("options") or {}
                    if isinstance(options, Mapping):
                        digests.add(JudgeKey.of(entry["name"], options).digest)
            by_run[label.run_id] = digests
        if label.judge not in by_run[label.run_id]:
            unknown[(label.judge, label.run_id)] = None
    return list(unknown)
