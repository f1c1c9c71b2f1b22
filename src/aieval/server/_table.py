"""The viewer's sample table: search, filter and sort a run's samples on the server.

A run of 100,000 samples never reaches the browser whole: the browser asks for one page of
the rows that match, in the order it wants. The rows of a run are indexed once (light rows:
short previews, scores, flags) and kept while the run's sample count is unchanged, so a new
search or sort costs a pass over the index, not over the store.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from aieval._records import SampleRecord
from aieval.errors import ConfigError
from aieval.server._rows import metadata_keys, sample_count, scorer_names, table_records
from aieval.store import Store

__all__ = ["SampleIndex", "TableQuery", "TableRow", "preview", "table_scorers"]

#: Characters of input / prediction / expected sent per table row (the full text is on the
#: sample's own page and behind the row's expander).
PREVIEW_CHARS = 240
_CACHED_RUNS = 4

Outcome = Literal["all", "failed", "passed", "gate_failed", "error", "no_error"]


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A value as one line of at most ``limit`` characters (``…`` marks a cut).

    >>> preview({"q": "2+2?"}), preview("x" * 5, 3)
    ('{"q": "2+2?"}', 'xx…')
    """
    import json

    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class TableRow:
    """One sample as the table shows it, plus what search and filters look at."""

    item: dict[str, Any]
    haystack: str
    metadata_keys: frozenset[str]
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableQuery:
    """What the table asks for: a text search, filters, one sort key, one page."""

    q: str = ""
    outcome: Outcome = "all"
    scorer: str | None = None
    min: float | None = None
    max: float | None = None
    meta: str | None = None
    sort: str = "index"
    order: Literal["asc", "desc"] = "asc"

    def keep(self, row: TableRow) -> bool:
        """Whether ``row`` matches every filter and the search."""
        item = row.item
        if not _outcome(item, self.outcome):
            return False
        if self.q and self.q.lower() not in row.haystack:
            return False
        if self.scorer is not None and not self._in_range(item["scores"].get(self.scorer)):
            return False
        return self.meta is None or _meta_matches(row, self.meta)

    def _in_range(self, value: Any) -> bool:
        if not isinstance(value, int | float):
            return False
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    def sort_key(self, names: Sequence[str]) -> Callable[[TableRow], Any]:
        """A key putting missing values last whichever the order (see :meth:`sorted`)."""
        sort = self.sort
        if sort.startswith("score:"):
            name = sort.removeprefix("score:")
            if name not in names:
                raise ConfigError(f"sort: no scorer {name!r} in this run; use one of {list(names)}")
            return lambda r: r.item["scores"].get(name)
        getters: dict[str, Callable[[TableRow], Any]] = {
            "index": lambda r: r.item["index"],
            "id": lambda r: r.item["id"],
            "weighted_score": lambda r: r.item["weighted_score"],
            "passed": lambda r: r.item["passed"],
            "error": lambda r: r.item["error"],
            "input": lambda r: r.item["input"],
            "prediction": lambda r: r.item["prediction"],
        }
        if sort not in getters:
            raise ConfigError(
                f"sort: unknown column {sort!r}; use one of {sorted(getters)} or score:NAME"
            )
        return getters[sort]

    def sorted(self, rows: list[TableRow], names: Sequence[str]) -> list[TableRow]:
        """``rows`` in the asked order; rows without a value go last in both orders."""
        key = self.sort_key(names)
        present = [r for r in rows if key(r) is not None]
        absent = [r for r in rows if key(r) is None]
        present.sort(key=key, reverse=self.order == "desc")
        return present + absent


def _outcome(item: dict[str, Any], outcome: Outcome) -> bool:
    if outcome == "passed":
        return item["passed"] is True
    if outcome == "failed":
        return item["passed"] is not True
    if outcome == "gate_failed":
        return bool(item["gate_failures"])
    # a malformed judge verdict counts as an error, as in the run's error count
    if outcome == "error":
        return bool(item["error"]) or bool(item["score_errors"]) or bool(item["malformed"])
    if outcome == "no_error":
        return not item["error"] and not item["score_errors"] and not item["malformed"]
    return True


def table_scorers(config: Mapping[str, Any], found: Sequence[str]) -> list[str]:
    """The scorer names a run's table sorts and filters by: those its samples carry, and those
    the run was configured with (a scorer whose every sample errored has no value, yet the run
    lists it, so it is a key too).

    >>> table_scorers({"scorers": [{"name": "exact_match", "options": {}}]}, [])
    ['exact_match']
    """
    configured = config.get("scorers")
    names = set(found)
    if isinstance(configured, list):
        names |= {str(s["name"]) for s in configured if isinstance(s, Mapping) and "name" in s}
    return sorted(names)


def _meta_matches(row: TableRow, meta: str) -> bool:
    key, eq, value = meta.partition("=")
    if not eq:
        return key in row.metadata_keys
    return row.metadata.get(key) == value


class SampleIndex:
    """Light rows of recently viewed runs, rebuilt when a run's sample count changes.

    Indexing a large run takes seconds, so it happens on a thread of its own: :meth:`ready`
    answers at once (the rows, or None while they are being built) and :meth:`rows` waits for
    them. A failed build raises in every request waiting for it, and the next request retries.
    """

    def __init__(self, row: Callable[[SampleRecord], dict[str, Any]]) -> None:
        self._row = row
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, tuple[int, list[TableRow], list[str]]] = OrderedDict()
        self._builds: dict[str, tuple[int, Future[tuple[list[TableRow], list[str]]]]] = {}
        self._columns: dict[str, tuple[int, list[str], list[str]]] = {}

    def ready(self, store: Store, run_id: str) -> tuple[list[TableRow], list[str]] | None:
        """The run's rows and scorer names if indexed at its current sample count; else None,
        with the run being indexed in the background."""
        count = sample_count(store.location, run_id)
        with self._lock:
            cached = self._runs.get(run_id)
            if cached is not None and cached[0] == count:
                self._runs.move_to_end(run_id)
                return cached[1], cached[2]
            self._start(store, run_id, count)
        return None

    def page(self, store: Store, run_id: str, limit: int, offset: int) -> dict[str, Any]:
        """One page of the run in dataset order, read from the store without the index (the
        ``/samples`` answer while the run is being indexed, marked ``"indexed": false``)."""
        total = sample_count(store.location, run_id)
        records = table_records(store.location, run_id, limit=limit, offset=offset)
        with self._lock:
            known = self._columns.get(run_id)
        if known is None or known[0] != total:
            # scorer names and metadata keys scan the run: once per sample count, not per page
            known = (
                total,
                scorer_names(store.location, run_id),
                metadata_keys(store.location, run_id),
            )
            with self._lock:
                self._columns[run_id] = known
        return {
            "samples": [self._row(record) for record in records],
            "total": total,
            "run_total": total,
            "scorers": known[1],
            "metadata_keys": known[2],
            "limit": limit,
            "offset": offset,
            "indexed": False,
        }

    def rows(self, store: Store, run_id: str) -> tuple[list[TableRow], list[str]]:
        """Every sample row of ``run_id`` in dataset order, and the run's scorer names; waits
        for the index (covering at least the samples stored when called)."""
        count = sample_count(store.location, run_id)
        while True:
            with self._lock:
                cached = self._runs.get(run_id)
                if cached is not None and cached[0] >= count:
                    self._runs.move_to_end(run_id)
                    return cached[1], cached[2]
                started, build = self._start(store, run_id, count)
            rows, names = build.result()
            if started >= count:
                return rows, names
            # that build began before some of this request's samples were stored: go again

    def _start(
        self, store: Store, run_id: str, count: int
    ) -> tuple[int, Future[tuple[list[TableRow], list[str]]]]:
        """The run's build in flight (with the sample count it began at), else a new one."""
        current = self._builds.get(run_id)
        if current is not None:
            return current
        build: Future[tuple[list[TableRow], list[str]]] = Future()
        self._builds[run_id] = (count, build)
        thread = threading.Thread(
            target=self._build, args=(store, run_id, build), name="aieval-index", daemon=True
        )
        thread.start()
        return count, build

    def _build(
        self, store: Store, run_id: str, build: Future[tuple[list[TableRow], list[str]]]
    ) -> None:
        try:
            rows = [self._index(record) for record in table_records(store.location, run_id)]
            names = sorted({name for r in rows for name in r.item["scores"]})
        except BaseException as exc:  # handed to every request waiting for this build
            with self._lock:
                if self._builds.get(run_id, (0, None))[1] is build:
                    del self._builds[run_id]
            build.set_exception(exc)
            return
        with self._lock:
            self._runs[run_id] = (len(rows), rows, names)
            self._runs.move_to_end(run_id)
            while len(self._runs) > _CACHED_RUNS:
                self._runs.popitem(last=False)
            if self._builds.get(run_id, (0, None))[1] is build:
                del self._builds[run_id]
            self._columns.pop(run_id, None)
        build.set_result((rows, names))

    def _index(self, record: SampleRecord) -> TableRow:
        item = self._row(record)
        texts = (record.input, record.prediction, record.expected)
        haystack = "\n".join(preview(t, 1 << 20) for t in texts).lower()
        metadata = {str(k): preview(v, 200) for k, v in (record.metadata or {}).items()}
        return TableRow(item, haystack, frozenset(metadata), metadata)
