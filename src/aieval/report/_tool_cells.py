"""The cells every renderer shows for the ``tools`` section (plain text; each renderer
escapes them: tool names come from models and datasets).

Renderers read the section back as typed figures (:func:`run_tables`,
:func:`compared_tables`) and lay each :class:`ToolTable` out in their own format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aieval.report._document import interval, pct, signed
from aieval.report._tool_results import Rate, ToolFigures, ToolRow
from aieval.report._tool_section import ComparedTools, ToolChange, read_tools

__all__ = [
    "TOOL_HEAD",
    "ToolTable",
    "compared_tables",
    "run_tables",
]

TOOL_HEAD = (
    "tool", "calls", "expected", "matched", "precision", "recall", "argument errors",
    "tool errors", "forbidden hits", "recovered",
)  # fmt: skip
CHANGE_HEAD = (
    "tool", "calls (base → cand)", "precision base", "precision cand", "Δ precision",
    "recall base", "recall cand", "Δ recall",
)  # fmt: skip
UNREADABLE_HEAD = ("sample", "why")


@dataclass(frozen=True, slots=True)
class ToolTable:
    """One table of the section: its title, head, rows (plain text) and a note under it; the
    first column is text, the rest figures."""

    title: str
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""
    #: how many leading columns are text (the rest are figures)
    left: int = 1
    #: the head for a layout that may print one block per row, each cell under its column's
    #: name (the terminal's): names that read true there too (empty: ``head``)
    block_head: tuple[str, ...] = ()


def rate_cell(rate: Rate) -> str:
    """``33.3% [6.1%, 79.2%] (1/3)``, ``-`` when nothing was counted."""
    if rate.estimate is None:
        return "-"
    return f"{pct(rate.estimate)} {interval(rate.low, rate.high, pct)} ({rate.successes}/{rate.n})"


def _short_rate(rate: Rate) -> str:
    return "-" if rate.estimate is None else f"{pct(rate.estimate)} ({rate.successes}/{rate.n})"


def _name(row: ToolRow | None, other_tools: int) -> str:
    if row is None or row.name is not None:
        return "" if row is None else str(row.name)
    return f"(other: {other_tools} tools)"


def _tool_cells(row: ToolRow, other_tools: int) -> tuple[str, ...]:
    return (
        _name(row, other_tools),
        str(row.calls),
        str(row.expected),
        str(row.matched),
        rate_cell(row.precision),
        rate_cell(row.recall),
        str(row.argument_errors),
        str(row.tool_errors),
        str(row.forbidden_hits),
        _short_rate(row.recovery),
    )


def totals_line(f: ToolFigures, *, scorer: bool, compact: bool = False) -> str:
    """``12 samples · 30 calls, 28 expected, 24 matched · precision … · recall … · …``
    (``compact``: the rates without their intervals)."""
    rate = _short_rate if compact else rate_cell
    parts = [
        *((f"scorer {f.scorer}",) if scorer else ()),
        f"{f.samples} samples with a trajectory",
        f"{f.calls} calls, {f.expected} expected, {f.matched} matched",
        f"precision {rate(f.precision)}",
        f"recall {rate(f.recall)}",
        f"tool-error recovery {rate(f.recovery)}",
    ]
    if f.unreadable:
        parts.append(f"{f.unreadable} unreadable (not counted)")
    return " · ".join(parts)


def run_tables(section: Any) -> list[tuple[str, list[ToolTable]]]:
    """Per scorer of a report's ``tools`` section: its totals line and its tables."""
    figures = read_tools(section)
    return [(totals_line(f, scorer=True), _figure_tables(f)) for f in figures]


def _figure_tables(f: ToolFigures) -> list[ToolTable]:
    rows = [_tool_cells(r, f.other_tools) for r in f.tools]
    if f.other is not None:
        rows.append(_tool_cells(f.other, f.other_tools))
    folded = (
        f"{f.other_tools} less-called tools are summed in the (other) row and column"
        if f.other_tools
        else ""
    )
    tables = [
        ToolTable(
            "Per tool (precision: matched / calls; recall: matched / expected; Wilson)",
            TOOL_HEAD,
            tuple(rows),
            folded,
        ),
        ToolTable(
            "Confusion: expected (rows) × called (columns)",
            ("expected \\ called", *f.confusion.labels),
            tuple(
                (label, *(str(n) for n in counts))
                for label, counts in zip(f.confusion.labels, f.confusion.counts, strict=True)
            ),
            "diagonal: same tool; off the diagonal: substitutions; (none) row: extra calls, "
            "(none) column: expected calls never made",
            # a block per row reads "expected: search / called search: 4 / called book: 0"
            block_head=("expected", *(f"called {label}" for label in f.confusion.labels)),
        ),
    ]
    if f.unreadable:
        shown = len(f.unreadable_samples)
        more = f" ({shown} of {f.unreadable})" if shown < f.unreadable else ""
        tables.append(
            ToolTable(
                "Unreadable trajectories (not counted)" + more,
                UNREADABLE_HEAD,
                tuple((u.sample_id, u.reason[:200]) for u in f.unreadable_samples),
                left=2,
            )
        )
    return tables


def _change_cells(change: ToolChange, other: Mapping[str, int]) -> tuple[str, ...]:
    base, cand = change.baseline, change.candidate
    name = (
        change.name
        if change.name is not None
        else f"(other: {other.get('baseline', 0)} / {other.get('candidate', 0)} tools)"
    )
    return (
        name,
        f"{'-' if base is None else base.calls} → {'-' if cand is None else cand.calls}",
        "-" if base is None else _short_rate(base.precision),
        "-" if cand is None else _short_rate(cand.precision),
        _points(change.precision_change),
        "-" if base is None else _short_rate(base.recall),
        "-" if cand is None else _short_rate(cand.recall),
        _points(change.recall_change),
    )


def _points(change: float | None) -> str:
    """A change of a rate in percentage points, ``-`` when one side has none."""
    return "-" if change is None else f"{signed(100 * change, 1)} pt"


def compared_tables(
    section: Any, limit: int | None = None, *, compact: bool = False
) -> tuple[list[str], list[ToolTable]]:
    """A comparison's ``tools`` section: each run's totals lines and, per scorer, the change
    table (``limit``: at most that many tools per scorer, the most called first; ``compact``:
    totals without intervals)."""
    compared = ComparedTools.from_dict(section)
    several = len({f.scorer for f in (*compared.baseline, *compared.candidate)}) > 1
    sides = (("baseline", compared.baseline), ("candidate", compared.candidate))
    lines = [
        f"{side} · {totals_line(f, scorer=several, compact=compact)}"
        for side, fs in sides
        for f in fs
    ]
    lines += [f"{side} · no tool trajectories stored" for side, fs in sides if not fs]
    other = {
        scorer: {side: f.other_tools for side, fs in sides for f in fs if f.scorer == scorer}
        for scorer in {c.scorer for c in compared.changes}
    }
    tables: list[ToolTable] = []
    for scorer in sorted(other):
        changes = [c for c in compared.changes if c.scorer == scorer]
        shown = changes if limit is None else changes[:limit]
        more = f" ({len(shown)} of {len(changes)} tools)" if len(shown) < len(changes) else ""
        tables.append(
            ToolTable(
                f"Per tool, baseline vs candidate{f' (scorer {scorer})' if several else ''}" + more,
                CHANGE_HEAD,
                tuple(_change_cells(c, other[scorer]) for c in shown),
                "Δ: candidate minus baseline, in percentage points (two runs' rates, not paired)",
            )
        )
    return lines, tables
