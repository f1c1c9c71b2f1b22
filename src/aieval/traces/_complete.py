"""What makes a trace incomplete: a parent that never arrived, no root or more than one, spans
whose parents form a cycle, open spans, spans that end before they start, dropped attributes or
events. Each problem is one
line naming the spans it concerns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aieval.traces._spans import Span

__all__ = ["in_cycles", "problems"]

_LISTED = 5


def problems(spans: Sequence[Span], by_id: Mapping[str, Span]) -> list[str]:
    """What is missing from a trace (empty when it is complete)."""
    found: list[str] = []
    orphans = [s for s in spans if s.parent_id and s.parent_id not in by_id]
    if orphans:
        parents = sorted({s.parent_id for s in orphans})
        found.append(
            f"{len(orphans)} span(s) whose parent never arrived: {_names(orphans)} "
            f"(missing parent span id(s) {', '.join(parents[:_LISTED])})"
        )
    roots = [s for s in spans if not s.parent_id]
    if spans and not roots:
        found.append("no root span (every span has a parent)")
    if len(roots) > 1:
        found.append(
            f"{len(roots)} root spans, where a trace has one (which one is the run is "
            f"unknown): {_names(roots)}"
        )
    cycled = in_cycles(spans, by_id)
    if cycled:
        found.append(
            f"{len(cycled)} span(s) whose parents form a cycle (each is its own ancestor): "
            f"{_names(cycled)}"
        )
    open_spans = [s for s in spans if not s.end_ns]
    if open_spans:
        found.append(f"{len(open_spans)} span(s) still open (no end time): {_names(open_spans)}")
    backwards = [s for s in spans if s.end_ns and s.end_ns < s.start_ns]
    if backwards:
        found.append(
            f"{len(backwards)} span(s) that end before they start (their times are not "
            f"trustworthy): {_times(backwards)}"
        )
    dropped = [s for s in spans if s.dropped]
    if dropped:
        kinds = sorted({k for s in dropped for k in s.dropped})
        found.append(
            f"{len(dropped)} span(s) with {'/'.join(kinds)} dropped by the exporter: "
            f"{_names(dropped)}"
        )
    return found


def in_cycles(spans: Sequence[Span], by_id: Mapping[str, Span]) -> list[Span]:
    """The spans that are their own ancestor (``X`` the parent of ``Y`` the parent of ``X``), in
    the order given; each parent link is followed once, so this takes linear time."""
    done: set[str] = set()
    cycled: set[str] = set()
    for span in spans:
        path: dict[str, None] = {}
        current: Span | None = span
        while current is not None and current.span_id not in done:
            if current.span_id in path:  # back on this walk's path: from there on, a cycle
                ring = list(path)
                cycled.update(ring[ring.index(current.span_id) :])
                break
            path[current.span_id] = None
            current = by_id.get(current.parent_id) if current.parent_id else None
        done.update(path)
    return [s for s in spans if s.span_id in cycled]


def _times(spans: Sequence[Span]) -> str:
    shown = [
        f"{s.name!r} ({s.span_id}, start {s.start_ns}, end {s.end_ns} ns)" for s in spans[:_LISTED]
    ]
    more = f" and {len(spans) - _LISTED} more" if len(spans) > _LISTED else ""
    return ", ".join(shown) + more


def _names(spans: Sequence[Span]) -> str:
    shown = [f"{s.name!r} ({s.span_id})" for s in spans[:_LISTED]]
    more = f" and {len(spans) - _LISTED} more" if len(spans) > _LISTED else ""
    return ", ".join(shown) + more
