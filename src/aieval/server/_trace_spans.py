"""The spans of the export requests ``POST /v1/traces`` received (see
:mod:`aieval.traces._stored`, where online scoring reads them too), imported only when traces
arrive: the traces extra is needed only then."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from aieval.store import ReceivedTraces

if TYPE_CHECKING:  # the traces extra is needed only when traces arrive
    from aieval.traces import Span

__all__ = ["decode", "stored_spans"]


def decode(body: bytes, fmt: str) -> list[Span]:
    """The spans of one export request body: see :func:`aieval.traces.decode`."""
    from aieval.traces import decode as decode_body

    return decode_body(body, fmt)


def stored_spans(
    store: ReceivedTraces,
    trace_ids: Iterable[str] | None = None,
    unreadable: list[str] | None = None,
) -> Iterator[Span]:
    """The stored spans of ``trace_ids``: see :func:`aieval.traces.stored_spans`."""
    from aieval.traces import stored_spans as spans_of

    return spans_of(store, trace_ids, unreadable)
