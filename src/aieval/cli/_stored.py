"""``aieval runs`` and ``aieval show``: list the stored runs, show one with its samples."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from aieval._terminal import printable, printable_lines
from aieval.cli._options import DbOption, RunRef, existing_store
from aieval.cli._print import (
    out,
    pct,
    print_evaluation,
    print_steps,
    print_top_errors,
    scorer_table,
    status_text,
    usage_parts,
    when,
)

if TYPE_CHECKING:
    from aieval import SampleRecord
    from aieval.runner import RunSummary
    from aieval.store import RunRow, Store

__all__ = ["runs_command", "show_command"]

#: how a run's summary ends an error message it cut short
_CUT = "…"


def runs_command(
    name: Annotated[str | None, typer.Option(help="Only runs with this name.")] = None,
    branch: Annotated[str | None, typer.Option(help="Only runs made on this git branch.")] = None,
    commit: Annotated[
        str | None, typer.Option(help="Only runs made at a git commit starting with this.")
    ] = None,
    host: Annotated[str | None, typer.Option(help="Only runs made on this host.")] = None,
    limit: Annotated[int, typer.Option(help="How many runs.")] = 20,
    db: DbOption = None,
) -> None:
    """List stored runs, most recent first, with the git branch, commit and host each was made
    on (a shared store holds everyone's runs: filter by them)."""
    store = existing_store(db)
    rows = store.list_runs(name=name, limit=limit, branch=branch, commit=commit, host=host)
    if not rows:
        filtered = any(v is not None for v in (name, branch, commit, host))
        out.print("no runs match" if filtered else "no runs stored yet")
        return
    # a run that did not complete has no summary: its stored samples are counted, at once
    counts = store.sample_counts([r.id for r in rows if "samples" not in (r.metrics or {})])
    table = Table(title=printable(f"runs in {store.location}"))
    columns = ("id", "name", "model", "status", "samples", "pass rate", "branch", "commit")
    for column in (*columns, "host", "when"):
        table.add_column(column, no_wrap=column in ("id", "commit", "when"))
    for row in rows:
        metrics = row.metrics or {}
        samples = metrics["samples"] if "samples" in metrics else counts[row.id]
        table.add_row(
            printable(row.id),
            printable(row.name),
            printable(row.model or "-"),
            status_text(row.status),
            str(samples),
            printable(_pass_rate(metrics)),
            printable(row.git_branch or "-"),
            printable((row.git_sha or "-")[:7]),
            printable(row.host or "-"),
            when(row.created_at),
        )
    out.print(table)


def show_command(
    run_ref: RunRef,
    samples: Annotated[int, typer.Option(help="How many samples to list.")] = 10,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only samples that did not pass.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    full: Annotated[
        bool, typer.Option("--full", help="Print inputs, answers and reasons uncut.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Show a stored run: its summary and its samples (input, expected answer, prediction, and
    each scorer's value and reason; long texts are cut unless --full)."""
    from aieval.cli._samples import print_samples

    store = existing_store(db)
    row = store.get_run(run_ref)
    stored = list(store.iter_samples(row.id))
    records = [s for s in stored if not failed or _failed(s)]
    if as_json:
        payload = {
            "run": {k: getattr(row, k) for k in row.__dataclass_fields__},
            "samples": [_sample_dict(s) for s in records[:samples]],
        }
        out.print_json(json.dumps(payload, default=str), ensure_ascii=True)  # no raw controls
        return
    summary = _print_run_row(row, store, uncut=stored if full else None)
    if summary.evaluation is not None:
        print_evaluation(summary.evaluation, records[:samples])
        print_steps(records[:samples])
    print_samples(out, records[:samples], len(records), full=full)
    _print_conversations(records[:samples])


def _print_conversations(records: list[SampleRecord]) -> None:
    """Each shown conversation sample as its transcript (role, source, tool calls)."""
    from aieval._terminal import printable
    from aieval.conversations import transcript_lines
    from aieval.errors import ConversationError

    for record in records:
        data = record.extra.get("conversation")
        if data is None:
            continue
        try:
            lines = transcript_lines(data)
        except ConversationError as exc:
            lines = [f"conversation of sample {record.id}: unreadable record: {exc}"]
        out.print("")
        for line in lines:  # the turns are data: no markup, no control characters
            out.print(printable(line), markup=False, highlight=False, soft_wrap=True)


def _sample_dict(record: SampleRecord) -> dict[str, Any]:
    found = _plain_sample_dict(record)
    if "conversation" in record.extra:  # a conversation sample: its whole record
        found["conversation"] = record.extra["conversation"]
    return found


def _plain_sample_dict(record: SampleRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "input": record.input,
        "expected": record.expected,
        "prediction": record.prediction,
        "passed": record.passed,
        "scores": {
            k: {"value": v.value, "reason": v.reason, "error": v.error}
            for k, v in record.scores.items()
        },
        "error": record.error,
        "verdict": None if record.verdict is None else record.verdict.to_dict(),
        # the workflow detail, under the name it had before verdicts
        "evaluation": None if record.verdict is None else record.verdict.workflow,
    }


def _failed(record: SampleRecord) -> bool:
    """Whether a sample did not pass (an invalid one neither passed nor failed)."""
    return not record.passed and not (record.verdict is not None and record.verdict.invalid)


def _print_run_row(
    row: RunRow, store: Store, *, uncut: Sequence[SampleRecord] | None = None
) -> RunSummary:
    """The run's heading, figures and top errors (with ``uncut``, those errors in full)."""
    summary = _with_counts(row, store)
    out.print(
        Text.assemble(
            "run ",
            (printable(row.id), "bold"),
            printable(f" · {row.name} · {row.model or '-'} · "),
            status_text(row.status),
            f" · {when(row.created_at)}",
        )
    )
    if row.error:
        out.print(printable_lines(row.error), style="red")
    if summary.samples and not summary.scorers:  # a rate would read as "all passed"
        out.print("no checks: nothing scored", highlight=False)
    if summary.scorers:
        from aieval.core import coverage_note, low_coverage  # not at import: `--help` loads none

        counts = {name: stats.to_dict() for name, stats in summary.scorers.items()}
        rated = _counted(summary.samples - (summary.invalid or 0))  # the invalid: left out
        out.print(scorer_table(summary.scorers))
        out.print(
            printable(
                f"pass rate {pct(summary.pass_rate)} of {rated}"
                + (
                    f" ({summary.invalid} invalid (simulated user) left out)"
                    if summary.invalid
                    else ""
                )
                + coverage_note(low_coverage(counts))
            ),
            highlight=False,
        )
    usage = usage_parts(summary)
    if usage:
        out.print(printable(" · ".join(usage)), highlight=False)
    print_top_errors(summary if uncut is None else _uncut_errors(summary, uncut))
    return summary


def _uncut_errors(summary: RunSummary, records: Sequence[SampleRecord]) -> RunSummary:
    """``summary`` with each top error it keeps cut short (to one line of a few hundred
    characters) in full, from the samples that have it; a cut text that begins more than one
    message stays cut, saying so, since its count is theirs together."""
    cut = [e.message[:-1] for e in summary.top_errors if e.message.endswith(_CUT)]
    if not cut:
        return summary
    whole: dict[str, set[str]] = {prefix: set() for prefix in cut}
    for record in records:
        for source, message in record.errors.items():
            flat = " ".join(f"{source}: {message}".split())
            for prefix in cut:
                if flat.startswith(prefix) and len(flat) > len(prefix):
                    whole[prefix].add(flat)
    entries = []
    for entry in summary.top_errors:
        found = whole.get(entry.message[:-1], set()) if entry.message.endswith(_CUT) else set()
        if len(found) == 1:
            entry = replace(entry, message=found.pop())
        elif found:
            entry = replace(
                entry, message=f"{entry.message} ({len(found)} messages begin so: see the samples)"
            )
        entries.append(entry)
    return replace(summary, top_errors=tuple(entries))


def _counted(samples: int) -> str:
    """``1 sample``, ``3 samples``: those the pass rate is over."""
    return f"{samples} sample{'' if samples == 1 else 's'}"


def _pass_rate(metrics: dict[str, Any]) -> str:
    """The run's pass rate and, beside it, the scorers it says nothing about."""
    from aieval.core import coverage_note, low_coverage

    low = low_coverage(metrics.get("scorers") or {})
    return pct(metrics.get("pass_rate")) + coverage_note(low, brief=True)


def _with_counts(row: RunRow, store: Store) -> RunSummary:
    """The run's stored summary; one stored before n/a was counted apart gets its per-scorer
    counts again from its samples (the same data: a None value without an error is n/a)."""
    from aieval.runner import Aggregator, RunSummary

    summary = RunSummary.from_dict(row.metrics)
    if any(s.not_applicable is None for s in summary.scorers.values()):
        tally = Aggregator(list(summary.scorers))
        for sample in store.iter_samples(row.id):
            tally.add(sample)
        summary = summary.replace(scorers=tally.summary().scorers)
    return summary
