"""Tables that fit the page and never lose a character.

A Rich table squeezed below its width crops its cells with "…", and one laid out wider than the
page makes lines of thousands of characters in a CI log. :func:`fit` wraps a table so that it
is laid out within the width it is given: every cell folds (a long word is broken across lines
of its column, not cut), and when even that cannot fit every column's longest word (and every
name kept whole), the table is printed as one block per row, each cell on its own
``column: value`` line, which reads well in a narrow terminal or a GitHub Actions log.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

__all__ = ["Fitted", "fit"]


def fit(table: Table) -> Fitted:
    """``table``, laid out within the page width (see the module)."""
    return Fitted(table)


class Fitted:
    """A table that folds its cells to the page width, or prints one block per row."""

    def __init__(self, table: Table) -> None:
        for column in table.columns:
            column.overflow = "fold"  # a long word breaks across lines, never ends in "…"
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table
        # the title and the blocks wrap too, also on a console that soft-wraps its lines
        options = options.update(no_wrap=False, overflow="fold")
        # a grid without headers has no names for its cells: it folds in place
        if not table.show_header or least_width(console, options, table) <= options.max_width:
            _widen(console, options, table)
            yield from console.render(table, options)
            return
        for part in _blocks(console, table):
            # a grid pads each line to its widest: a log line ends at its last character
            for line in console.render_lines(part, options, pad=False):
                yield from _rstripped(line)
                yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)


def _rstripped(line: list[Segment]) -> list[Segment]:
    """``line`` without the blanks at its end."""
    kept = list(line)
    while kept and not kept[-1].control and not kept[-1].text.rstrip():
        kept.pop()
    if kept and not kept[-1].control:
        last = kept[-1]
        kept[-1] = Segment(last.text.rstrip(), last.style, last.control)
    return kept


def least_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The narrowest the table lays out without breaking a word or a name: each column its
    longest word (its longest cell when the column does not wrap), plus padding and rules."""
    _, right, _, left = table.padding
    total = sum(_least_widths(console, options, table)) + (left + right) * len(table.columns)
    return total + (len(table.columns) + 1 if table.box is not None else 0)


def _widen(console: Console, options: ConsoleOptions, table: Table) -> None:
    """Give each column its width: at least its longest word, the widest columns narrowed
    first (squeezed to fit, Rich would break a word of one column, "complete" / "d", while
    another still had room to wrap at a space)."""
    least = _least_widths(console, options, table)
    most = [
        max(
            (Measurement.get(console, options, c).maximum
             for c in ([col.header, *col.cells] if table.show_header else list(col.cells))),
            default=0,
        )
        for col in table.columns
    ]  # fmt: skip
    _, right, _, left = table.padding
    overhead = (left + right) * len(table.columns) + (
        len(table.columns) + 1 if table.box is not None else 0
    )
    room = options.max_width - overhead
    if sum(most) <= room:
        return  # laid out whole: nothing to share

    # the widest columns give up room first (each down to its longest word): the largest cap
    # under which every column fits, then what is left to the capped columns, one each
    def laid(cap: int) -> list[int]:
        return [min(m, max(lo, cap)) for m, lo in zip(most, least, strict=True)]

    low, high = 0, max(most)
    while low < high:
        cap = (low + high + 1) // 2
        low, high = (cap, high) if sum(laid(cap)) <= room else (low, cap - 1)
    widths = laid(low)
    spare = room - sum(widths)
    for index, (width, whole) in enumerate(zip(widths, most, strict=True)):
        if spare > 0 and width < whole:
            widths[index] += 1
            spare -= 1
    for column, width in zip(table.columns, widths, strict=True):
        column.width = width


def _least_widths(console: Console, options: ConsoleOptions, table: Table) -> list[int]:
    """Each column's longest word (its longest cell when the column does not wrap)."""
    found = []
    for column in table.columns:
        cells = [column.header, *column.cells] if table.show_header else list(column.cells)
        widths = [Measurement.get(console, options, cell) for cell in cells]
        found.append(max((w.maximum if column.no_wrap else w.minimum for w in widths), default=0))
    return found


def _blocks(console: Console, table: Table) -> Iterator[RenderableType]:
    """The table as one block per row: its title, then ``column: value`` lines per row, a
    blank line between rows."""
    if table.title:
        yield console.render_str(str(table.title), style=table.title_style or "table.title")
    headers = [
        c.header.plain if isinstance(c.header, Text) else str(c.header) for c in table.columns
    ]
    columns = [list(c.cells) for c in table.columns]
    for row in range(table.row_count):
        yield Text("")  # a blank line before each row: after the title, between rows
        block = Table.grid(padding=(0, 1))
        block.add_column(no_wrap=True, style="bold")
        block.add_column(overflow="fold")
        for header, cells in zip(headers, columns, strict=True):
            block.add_row(Text(f"  {header}:" if header else "  "), cells[row])
        yield block
    if table.caption:
        yield console.render_str(str(table.caption), style=table.caption_style or "table.caption")
