"""The command line's consoles and the printers its commands share.

Run names, sample ids, predictions and error messages come from users and models: no console
ever reads them as Rich markup (a "[/]" in a model's answer must print, not crash), and every
such text passes through :func:`printable`. Colour is given explicitly, as styled Text.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aieval._tables import fit
from aieval._terminal import printable, printable_lines

if TYPE_CHECKING:
    from aieval import SampleRecord
    from aieval.core import ToolCallDetail, WeightCoverage
    from aieval.runner import EvaluationSummary, RunSummary, ScorerSummary

__all__ = [
    "LOG_WIDTH",
    "console",
    "err",
    "labelled",
    "log_width",
    "num",
    "out",
    "pct",
    "print_evaluation",
    "print_steps",
    "print_top_errors",
    "scorer_table",
    "status_text",
    "usage_parts",
    "when",
    "yes_no",
]

#: The width of output that is not a terminal (a pipe, a CI log) when ``$COLUMNS`` is not set.
LOG_WIDTH = 100


class _Console(Console):
    """A console that lays every table it prints out within its width (:func:`fit`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(fit(o) if isinstance(o, Table) else o for o in objects), **kwargs)


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that reads no markup and fits its tables to its width.

    Piped or logged output (a CI log) is not a terminal: its width is ``$COLUMNS``, else
    :data:`LOG_WIDTH`. A table folds its cells within that width, or prints one block per row
    when its columns cannot fit (never a line of thousands of characters, never a cut cell);
    a summary or an error stays one line whatever its length (soft wrap), so it can be found
    with grep.
    """
    made = _Console(stderr=stderr, markup=False)
    if made.is_terminal:
        return made
    return _Console(stderr=stderr, markup=False, width=log_width(), soft_wrap=True)


def log_width() -> int:
    """``$COLUMNS`` when it is a positive number, else :data:`LOG_WIDTH`."""
    columns = os.environ.get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else LOG_WIDTH


out = console()
err = console(stderr=True)


def num(value: Any) -> str:
    """A number with three decimals, ``-`` for none."""
    return "-" if value is None else f"{value:.3f}"


def pct(value: Any) -> str:
    """A share as a percentage with one decimal, ``-`` for none."""
    return "-" if value is None else f"{100 * value:.1f}%"


def status_text(status: str) -> Text:
    """A run's status, coloured."""
    colour = {"completed": "green", "running": "yellow", "interrupted": "yellow"}.get(status, "red")
    return Text(status, style=colour)


def yes_no(passed: bool | None) -> Text:
    """``yes`` in green or ``no`` in red."""
    return Text("yes", style="green") if passed else Text("no", style="red")


def when(stamp: float) -> str:
    """A Unix time as local ``YYYY-MM-DD HH:MM``."""
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def labelled(label: str, style: str, message: str) -> Text:
    """``label message`` with only the label coloured; the message is plain text, escaped line
    by line (a message of several lines keeps its line breaks)."""
    return Text.assemble((label, style), " ", printable_lines(message))


def scorer_table(
    scorers: Mapping[str, ScorerSummary], *, title: str | None = None, numbers_right: bool = False
) -> Table:
    """Per-scorer mean, std, scored, errors and n/a of a run summary."""
    table = Table(title=title, title_justify="left")
    for column in ("metric", "mean", "std", "scored", "errors", "n/a"):
        right = numbers_right and column != "metric"
        table.add_column(column, justify="right" if right else "left")
    for name, stats in scorers.items():
        table.add_row(
            printable(name),
            num(stats.mean),
            num(stats.std),
            str(stats.count),
            str(stats.errors),
            # "-": a stored summary from before n/a was counted apart
            "-" if stats.not_applicable is None else str(stats.not_applicable),
        )
    return table


def usage_parts(summary: RunSummary) -> list[str]:
    """Latency, tokens (target, judges, total), cost (``-``: unknown) and cache share."""
    from aieval._usage_figures import format_cache, format_cost, format_tokens  # loads pydantic

    parts = []
    latency = summary.latency_s
    if latency.p50 is not None:
        parts.append(f"latency p50 {latency.p50:.2f}s p95 {latency.p95 or 0.0:.2f}s")
    tokens = summary.tokens
    # unknown (a call reported none) is shown as such, never left out as if nothing was used
    if summary.input_tokens or summary.output_tokens or (tokens and tokens.overall.unreported):
        old = {"input": summary.input_tokens, "output": summary.output_tokens}
        parts.append(format_tokens(old if tokens is None else tokens.to_dict()))
    if summary.cost is not None or summary.unpriced_samples:
        parts.append(f"cost {format_cost(summary.cost)}")
    cache = format_cache(None if summary.cache is None else summary.cache.to_dict())
    if cache:
        parts.append(cache)
    return parts


def print_top_errors(summary: RunSummary) -> None:
    """The most frequent error messages of a run, with how many samples each hit."""
    if summary.top_errors:
        out.print("top errors:", style="red")
    for entry in summary.top_errors:
        out.print(Text.assemble((f"  {entry.count:>5} × ", "red"), printable(entry.message)))


def print_evaluation(evaluation: EvaluationSummary, records: Sequence[SampleRecord]) -> None:
    """Graded workflow runs: grade distribution, gate failure rates, and each run's verdict."""
    grades = " ".join(f"{g}:{n}" for g, n in evaluation.grades.items())
    failing = {g: r for g, r in evaluation.gate_failure_rates.items() if r}
    gates = ", ".join(f"{g} {pct(r)}" for g, r in failing.items()) or "none"
    out.print(f"grades {grades} · graded pass rate {pct(evaluation.pass_rate)}")
    out.print(f"gate failures: {printable(gates)}")
    table = Table(title="graded runs", title_justify="left")
    for column in ("run", "grade", "passed", "score", "why"):
        table.add_column(column, overflow="fold")
    for record in records:
        verdict = record.verdict
        ev = verdict.workflow_detail if verdict is not None else None
        if verdict is None or ev is None:
            continue
        table.add_row(
            printable(record.id),
            printable(verdict.grade),
            yes_no(verdict.passed),
            _score_cell(verdict.weighted_score, ev.coverage),
            printable("; ".join(ev.why)),
        )
    out.print(table)


def print_steps(records: Sequence[SampleRecord]) -> None:
    """Each graded run's (or trace's) steps: agent, status, duration, model calls, tokens and
    tool calls, with a total row per run."""
    table = Table(title="steps per run", title_justify="left")
    for column in ("run", "step", "agent", "status", "time", "model calls", "tokens in/out"):
        table.add_column(column, overflow="fold")
    table.add_column("tool calls", overflow="fold")
    shown = False
    for record in records:
        ev = record.verdict.workflow_detail if record.verdict is not None else None
        steps = ev.steps if ev is not None else ()
        if not steps:
            continue
        shown = True
        for i, d in enumerate(steps):
            table.add_row(
                printable(record.id) if i == 0 else "",
                printable(d.name),
                printable(d.agent or "-"),
                printable(d.status),
                _seconds(d.duration_s),
                str(d.model_calls),
                _in_out(d.input_tokens, d.output_tokens, d.tokens),
                printable(", ".join(_call_text(c) for c in d.tool_calls) or "-"),
            )
        calls = sum(len(d.tool_calls) for d in steps)
        table.add_row(
            "",
            f"all {len(steps)} steps",
            "",
            "",
            "",
            str(sum(d.model_calls for d in steps)),
            _in_out(
                _sum(d.input_tokens for d in steps),
                _sum(d.output_tokens for d in steps),
                _sum(d.tokens for d in steps),
            ),
            f"{calls} tool call{'s' if calls != 1 else ''}",
            end_section=True,
        )
    if shown:
        out.print(table)


def _call_text(call: ToolCallDetail) -> str:
    if call.executed is False:
        return call.name + " (not executed)"
    if call.status == "failed":
        return call.name + " (failed)"
    return call.name


def _sum(values: Iterable[int | None]) -> int | None:
    """The sum of token counts, ``None`` (unknown) when any is unknown."""
    total = 0
    for value in values:
        if value is None:
            return None
        total += value
    return total


def _in_out(ins: int | None, outs: int | None, total: int | None) -> str:
    if ins is not None and outs is not None:
        return f"{ins}/{outs}"
    return f"{total} total" if total is not None else "-"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def _score_cell(score: float | None, coverage: WeightCoverage | None) -> str:
    """The weighted score, with the share of the weights it covers when that is not all."""
    if score is None:
        return "-"
    share = coverage.share if coverage is not None else None
    if share is None or share >= 1:
        return f"{score:.2f}"
    from aieval.grading import coverage_percent

    return f"{score:.2f} over {coverage_percent(share)} of the weights"
