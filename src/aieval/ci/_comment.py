"""The pull-request comment of ``aieval github`` kept within GitHub's limit as a whole.

GitHub refuses a comment over 65,536 characters, whatever the number of runs in it. The
budget is therefore shared: the heading, the table of runs (at most a quarter of it, cut between
rows) and a footer first; then every run's compact section (its decision and the command that
shows it all), in order, as long as they fit (one line says how many runs were left out); then
the room left goes to full sections, shared equally, a section that needs less than its share
leaving the rest to the others. Every cut says so in the comment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aieval.errors import ConfigError
from aieval.report import COMMENT_LIMIT

__all__ = ["Section", "compose"]

#: Below this many characters a run's full section is not tried: its compact form is shown.
MIN_SECTION = 1_500
# room kept for the line saying how many sections were left out
_LEFT_OUT_ROOM = 300
_SIZE = "to keep the comment under GitHub's size limit"


@dataclass(frozen=True, slots=True)
class Section:
    """One candidate run's part of the comment.

    Attributes:
        title: its heading (decision, name, model), shown in every form.
        pointer: where to see all of it (a command), the compact form's second line.
        render: the full section in at most the given number of characters (a
            :class:`ConfigError`, or a longer text, when it cannot be).
    """

    title: str
    pointer: str
    render: Callable[[int], str]

    @property
    def compact(self) -> str:
        """The short form: the heading and where to see all of it."""
        return f"{self.title}\n\n{self.pointer}"

    def full(self, limit: int) -> str | None:
        """The full section in at most ``limit`` characters, or ``None`` when it does not
        fit."""
        asked = limit
        for _ in range(3):  # a renderer may overshoot what it was asked: ask for less
            if asked < MIN_SECTION:
                return None
            try:
                text = self.render(asked)
            except ConfigError:  # its first screen alone is longer than that
                return None
            if len(text) <= limit:
                return text
            asked -= len(text) - limit + 256
        return None


def compose(
    lead: str,
    table: tuple[str, Sequence[str]] | None,
    sections: Sequence[Section],
    footer: str,
    *,
    limit: int = COMMENT_LIMIT,
) -> tuple[str, list[str]]:
    """The comment (``lead``, the table of runs, the sections, ``footer``, in at most ``limit``
    characters) and each section as shown in it (``""``: left out).

    Every run that fits gets its compact form first, in order; the room left is then shared
    out, in up to three rounds, to show full sections: a section that needs less than its share
    leaves the rest to the others.

    Args:
        table: the table's header lines and its rows, or ``None`` for no table.
    """
    budget = limit - len(lead) - len(footer) - 8 - _LEFT_OUT_ROOM
    parts = [lead]
    if table is not None:
        text = _table(*table, budget // 4)
        parts.append(text)
        budget -= len(text) + 2
    shown: list[str] = []
    for section in sections:
        if len(section.compact) + 2 > budget:
            break
        shown.append(section.compact)
        budget -= len(section.compact) + 2
    pending = list(range(len(shown)))
    for _ in range(3):
        if not pending or budget // len(pending) < MIN_SECTION:
            break
        share, cut = budget // len(pending), []
        for i in pending:
            allowance = len(shown[i]) + share
            full = sections[i].full(allowance)
            if full is None or len(full) <= len(shown[i]):
                cut.append(i)  # more room may let it render
                continue
            budget -= len(full) - len(shown[i])
            shown[i] = full
            if len(full) > allowance - 2 * MIN_SECTION:
                cut.append(i)  # it used its room: more would show more of it
        pending = cut
    parts += shown
    missing = len(sections) - len(shown)
    if missing:
        parts.append(
            f"_{missing:,} more runs left out {_SIZE}: the table above and the step's `runs` "
            "output name them all._"
        )
    parts.append(footer)
    return "\n\n".join(parts) + "\n", shown + [""] * missing


def _table(header: str, rows: Sequence[str], budget: int) -> str:
    """``header`` and as many ``rows`` as fit in ``budget``, then a line naming how many were
    left out."""
    note = "\n\n_{:,} more runs not listed " + _SIZE + "._"
    room = budget - len(header) - len(note) - 16
    kept = []
    for row in rows:
        if len(row) + 1 > room:
            break
        kept.append(row)
        room -= len(row) + 1
    text = "\n".join([header, *kept])
    return text + (note.format(len(rows) - len(kept)) if len(kept) < len(rows) else "")
