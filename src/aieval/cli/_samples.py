"""What ``aieval show`` and ``aieval diff`` print of a sample: its input, expected answer,
prediction, and each scorer's value, reason and error.

Every text is data from users and models: control characters and ANSI escapes are shown as
escapes, line breaks kept. Long text is cut to a preview
ending in a marker that says how much was left out and how to see it all (``--full``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from aieval._terminal import printable, printable_lines
from aieval.errors import RunNotFoundError

if TYPE_CHECKING:
    from aieval import SampleRecord
    from aieval.store import Store

__all__ = ["PREVIEW_CHARS", "PREVIEW_LINES", "clip_text", "print_diff_samples", "print_samples"]

#: Characters of one text shown without ``--full``.
PREVIEW_CHARS = 300
#: Lines of one text shown without ``--full``.
PREVIEW_LINES = 6

_MARKER = "… [{left:,} more characters; --full shows all]"


def clip_text(value: Any, *, full: bool = False) -> str:
    """``value`` as escaped text: strings as they are, other data as JSON; without ``full``,
    at most :data:`PREVIEW_CHARS` characters and :data:`PREVIEW_LINES` lines, then a marker
    naming how many characters were left out and ``--full``.

    Example:
        >>> clip_text("ok\\x1b[2J")
        'ok\\\\x1b[2J'
        >>> clip_text("x" * 305).endswith("x… [5 more characters; --full shows all]")
        True
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if full:
        return printable_lines(text)
    cut = min(len(text), PREVIEW_CHARS)
    breaks = [i for i, c in enumerate(text[:cut]) if c == "\n"]
    if len(breaks) >= PREVIEW_LINES:
        cut = breaks[PREVIEW_LINES - 1]
    if cut == len(text):
        return printable_lines(text)
    return printable_lines(text[:cut]) + _MARKER.format(left=len(text) - cut)


def print_samples(
    console: Console, records: Sequence[SampleRecord], total: int, *, full: bool
) -> None:
    """``aieval show``'s samples: a heading, then each sample's texts and scores."""
    console.print(Text(f"samples ({len(records)} of {total})", style="bold"))
    for record in records:
        console.print(_title(record.id, record))
        console.print(_grid(_sample_rows(record, full=full)))


def print_diff_samples(
    console: Console, store: Store, comparison: Mapping[str, Any], *, limit: int, full: bool
) -> None:
    """``aieval diff``'s examples side by side: the listed regressions and improvements, each
    with its input, expected answer, and both runs' predictions and scores."""
    base_id, cand_id = comparison["baseline"]["id"], comparison["candidate"]["id"]
    for kind in ("regressions", "improvements"):
        rows = comparison[kind][:limit]
        if not rows:
            continue
        console.print(Text(f"{kind}: answers and reasons ({len(rows)})", style="bold"))
        for row in rows:
            console.print(_pair(store, base_id, cand_id, str(row["id"]), row.get("delta"), full))


def _pair(
    store: Store, base_id: str, cand_id: str, sample_id: str, delta: Any, full: bool
) -> RenderableType:
    base, cand = _sample(store, base_id, sample_id), _sample(store, cand_id, sample_id)
    title = Text.assemble(("example ", "dim"), (printable(sample_id), "bold"))
    if isinstance(delta, int | float):
        title.append(f" · delta {delta:+.1f}")
    rows: list[tuple[Text, Text]] = []
    known = base or cand
    if known is not None:
        rows.append(_row("input", clip_text(known.prompt, full=full)))
    if base is not None and cand is not None and base.expected != cand.expected:
        rows.append(_row("expected (baseline)", clip_text(base.expected, full=full)))
        rows.append(_row("expected (candidate)", clip_text(cand.expected, full=full)))
    elif known is not None:
        rows.append(_row("expected", clip_text(known.expected, full=full)))
    for side, record in (("baseline", base), ("candidate", cand)):
        if record is None:
            rows.append(_row(side, "(no such sample in this run)", style="yellow"))
            continue
        rows.append(_row(side, _verdict(record), style="bold"))
        rows.extend(_answer_rows(record, full=full, indent="  "))
    return Group(title, _grid(rows))


def _sample(store: Store, run_id: str, sample_id: str) -> SampleRecord | None:
    try:
        return store.get_sample(run_id, sample_id)
    except RunNotFoundError:
        return None


def _title(sample_id: str, record: SampleRecord) -> Text:
    return Text.assemble(
        ("sample ", "dim"), (printable(sample_id), "bold"), " · ", _verdict(record)
    )


def _verdict(record: SampleRecord) -> Text:
    if record.verdict is not None and record.verdict.invalid:
        return Text("invalid", style="yellow")  # neither pass nor fail: counted apart
    return Text("pass", style="green") if record.passed else Text("fail", style="red")


def _sample_rows(record: SampleRecord, *, full: bool) -> list[tuple[Text, Text]]:
    return [
        _row("input", clip_text(record.prompt, full=full)),
        _row("expected", clip_text(record.expected, full=full)),
        *_answer_rows(record, full=full, indent=""),
    ]


def _answer_rows(record: SampleRecord, *, full: bool, indent: str) -> list[tuple[Text, Text]]:
    """The prediction (or the target's error), then one row per scorer: value, reason, error."""
    rows = []
    if record.error:
        rows.append(_row(f"{indent}error", clip_text(record.error, full=full), style="red"))
    if record.prediction is None:
        rows.append(_row(f"{indent}prediction", "(none)", style="dim"))
    else:
        rows.append(_row(f"{indent}prediction", clip_text(record.prediction, full=full)))
    for name, score in record.scores.items():
        value = "n/a" if score.not_applicable else "-" if score.value is None else None
        cell = Text(value or f"{score.value:.3f}")
        if score.malformed:
            cell.append("  malformed", style="yellow")
        if score.reason:
            cell.append("  " + clip_text(score.reason, full=full))
        if score.error:
            cell.append("  error: " + clip_text(score.error, full=full), style="red")
        rows.append((Text(f"{indent}{printable(name)}", style="cyan"), cell))
    return rows


def _row(label: str, value: str | Text, *, style: str = "") -> tuple[Text, Text]:
    cell = value if isinstance(value, Text) else Text(value, style=style)
    return Text(label, style="dim"), cell


def _grid(rows: Sequence[tuple[Text, Text]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(Text("  ") + label, value)
    return grid
