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
from dataclasses import dataclass, field
from typing import Any, Literal

from aieval._records import SampleRecord
from aieval.errors import ConfigError
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
    if outcome == "error":
        return bool(item["error"]) or bool(item["score_errors"])
    if outcome == "no_error":
        return not item["error"] and not item["score_errors"]
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
    """Light rows of recently viewed runs, rebuilt when a run's sample count changes."""

    def __init__(self, row: Callable[[SampleRecord], dict[str, Any]]) -> None:
        self._row = row
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, tuple[int, list[TableRow], list[str]]] = OrderedDict()

    def rows(self, store: Store, run_id: str) -> tuple[list[TableRow], list[str]]:
        """Every sample row of ``run_id`` in dataset order, and the run's scorer names."""
        count = store.count_samples(run_id)
        with self._lock:
            cached = self._runs.get(run_id)
            if cached is not None and cached[0] == count:
                self._runs.move_to_end(run_id)
                return cached[1], cached[2]
        rows = [self._index(record) for record in store.iter_samples(run_id)]
        names = sorted({name for r in rows for name in r.item["scores"]})
        with self._lock:
            self._runs[run_id] = (len(rows), rows, names)
            while len(self._runs) > _CACHED_RUNS:
                self._runs.popitem(last=False)
        return rows, names

    def _index(self, record: SampleRecord) -> TableRow:
        item = self._row(record)
        texts = (record.input, record.prediction, record.expected)
        haystack = "\n".join(preview(t, 1 << 20) for t in texts).lower()
        metadata = {str(k): preview(v, 200) for k, v in (record.metadata or {}).items()}
        return TableRow(item, haystack, frozenset(metadata), metadata)
