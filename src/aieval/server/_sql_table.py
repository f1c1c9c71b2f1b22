"""The sample table of a run in a PostgreSQL store, answered by the store's SQL (indexes,
keyset pages, kept counts) instead of an index held in this process: a team's store of ten
million samples costs the server one page of rows per request, not a run in memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from aieval._records import SampleRecord
from aieval.errors import StoreError
from aieval.server._table import _KEYS_FROM, _KEYS_MOST, TableQuery
from aieval.store import Store, TableQueries, TableReads

__all__ = ["count_field", "sql_page"]


def count_field(value: int, kind: str = "exact") -> dict[str, Any]:
    """The answer's ``count``: how many samples match, and whether exactly (``kind``
    ``exact``) or at least (``at_least``)."""
    return {"value": value, "exact": kind == "exact", "kind": kind}


def sql_page(
    store: Store,
    queries: TableQueries,
    row: Callable[[SampleRecord], dict[str, Any]],
    run_id: str,
    query: TableQuery,
    names: Sequence[str],
    *,
    limit: int,
    offset: int,
    after: str | None,
    exact: bool = True,
) -> dict[str, Any]:
    """The ``/samples`` answer of one page: the browser's shape, plus ``next`` (the token of
    the page after it, or None) and ``search`` (how a text search ran). ``exact=False``: the
    count may be a lower bound (``count.kind``), ``total`` then None."""
    query.check(names)
    found = queries.page(run_id, query, limit=limit, offset=offset, after=after, exact=exact)
    reads = TableReads(store.location, queries.pool)
    records = reads.records(run_id, ids=found.ids)
    if len(records) != len(found.ids):
        raise StoreError(
            f"run {run_id}: {len(found.ids) - len(records)} sample(s) of this page were deleted"
            " from the store while it was listed; ask again"
        )
    return {
        "samples": [row(record) for record in records],
        "total": found.total,
        "count": count_field(found.count.value, found.count.kind),
        "run_total": found.run_total,
        "scorers": list(names),
        "metadata_keys": queries.metadata_keys(run_id, _KEYS_FROM, _KEYS_MOST),
        "limit": limit,
        "offset": offset,
        "indexed": True,
        "next": found.next,
        "search": found.search,
    }
