"""The viewer's sample table: search, filter and sort a run's samples on the server.

A run of a million samples never reaches the browser whole: the browser asks for one page of
the rows that match, in the order it wants. Each run is indexed once into columns (numpy
arrays of ids, positions, pass flags, scores; the lower-cased texts in chunks for search;
metadata values by key), so a search, filter or sort is a few vectorized passes and the page's
50 rows are then read from the store by id. A run that grows is indexed further from where
the index stopped (the store's insertion order), not again from the start.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from aieval._records import SampleRecord
from aieval.errors import ConfigError, StoreError
from aieval.store import IndexRow, Store, TableAsk, TableReads

__all__ = ["RunTable", "SampleIndex", "TableQuery", "preview", "table_scorers"]

#: Characters of input / prediction / expected sent per table row (the full text is on the
#: sample's own page and behind the row's expander).
PREVIEW_CHARS = 240
_CACHED_RUNS = 4
#: samples read from the store per step of an index build
_BATCH = 20_000
#: rows per search chunk: one chunk's texts are one string
_CHUNK = 4096
#: sort orders and search answers kept per run
_KEPT = 8
#: the metadata keys listed are those of the first samples in dataset order
_KEYS_FROM, _KEYS_MOST = 5000, 50

#: The pass code of an invalid sample (a conversation whose simulated user failed fidelity).
_INVALID = -2
Outcome = Literal["all", "failed", "passed", "invalid", "gate_failed", "error", "no_error"]
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

#: the columns sorted as text (ranked once per index, on the first sort by them)
_TEXT_SORTS = ("id", "error", "input", "prediction")
_SORTS = ("index", "weighted_score", "passed", *_TEXT_SORTS)
#: what a sample without input shows as its input (its prompt: the input as JSON)
_NULL = "null"


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


@dataclass(frozen=True, slots=True, kw_only=True)
class TableQuery(TableAsk):
    """What the table asks for: a text search, filters, one sort key, one page (the fields of
    the store's :class:`~aieval.store.TableAsk`, which a PostgreSQL store answers in SQL)."""

    def check(self, names: Sequence[str]) -> None:
        """Raise :class:`ConfigError` naming the field if the sort or scorer is unknown."""
        if self.sort.startswith("score:"):
            name = self.sort.removeprefix("score:")
            if name not in names:
                raise ConfigError(f"sort: no scorer {name!r} in this run; use one of {list(names)}")
        elif self.sort not in _SORTS:
            raise ConfigError(
                f"sort: unknown column {self.sort!r}; use one of {sorted(_SORTS)} or score:NAME"
            )
        if self.scorer is not None and self.scorer not in names:
            raise ConfigError(f"scorer: no scorer {self.scorer!r} in this run; use one of {names}")


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


@dataclass(slots=True)
class _Meta:
    """One metadata key: the positions of the samples holding it, and each one's value."""

    rows: list[int] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    values: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Chunk:
    """The lower-cased texts of up to ``_CHUNK`` samples as one string, and where each starts
    and ends in it."""

    first: int
    text: str
    starts: list[int]
    ends: list[int]


class _Columns:
    """A run's samples as growing lists, in the order they were stored (one builder at a time
    appends; :meth:`freeze` hands readers an immutable :class:`RunTable`)."""

    def __init__(self) -> None:
        self.position = 0  # the store's insertion position of the last sample read
        self.ids: list[str] = []
        self.index: list[int] = []
        self.passed: list[int] = []  # 1, 0, -1, -2: passed, failed, unknown, invalid
        self.weighted: list[float] = []
        self.errored: list[bool] = []
        self.gated: list[bool] = []
        self.texts: dict[str, list[str | None]] = {k: [] for k in ("error", "input", "prediction")}
        self.scores: dict[str, list[float]] = {}
        self.meta: dict[str, _Meta] = {}
        self.chunks: list[_Chunk] = []
        self._pending: list[str] = []

    def add(self, row: IndexRow) -> None:
        """Index one sample (what :func:`~aieval.server._views.sample_item` shows of it)."""
        n = len(self.ids)
        self.ids.append(row.id)
        self.index.append(row.index)
        self.passed.append(
            _INVALID if row.invalid else -1 if row.passed is None else int(row.passed)
        )
        weighted = row.weighted_score
        self.weighted.append(np.nan if weighted is None else float(weighted))
        # a malformed judge verdict counts as an error, as in the run's error count
        self.errored.append(bool(row.error) or any(bad for _, bad in row.scores.values()))
        self.gated.append(row.gate_failed)
        self.texts["error"].append(row.error)
        shown = row.input if row.input is not None else _NULL  # a record's prompt
        self.texts["input"].append(preview(shown))
        self.texts["prediction"].append(preview(row.prediction))
        for name, (value, _) in row.scores.items():
            column = self.scores.get(name)
            if column is None:
                column = self.scores[name] = [np.nan] * n
            ok = isinstance(value, int | float) and value == value  # NaN: no value
            column.append(float(value) if ok and value is not None else np.nan)
        for column in self.scores.values():
            if len(column) == n:  # no value of this scorer for this sample
                column.append(np.nan)
        for key, value in (row.metadata or {}).items():
            meta = self.meta.setdefault(str(key), _Meta())
            meta.rows.append(n)
            meta.codes.append(meta.values.setdefault(preview(value, 200), len(meta.values)))
        texts = (row.input, row.prediction, row.expected)
        self._pending.append("\n".join(preview(t, 1 << 20) for t in texts).lower())
        if len(self._pending) == _CHUNK:
            self._seal()

    def _seal(self) -> None:
        if not self._pending:
            return
        starts, ends, at = [], [], 0
        for text in self._pending:
            starts.append(at)
            at += len(text)
            ends.append(at)
            at += 1
        first = len(self.ids) - len(self._pending)
        self.chunks.append(_Chunk(first, "\0".join(self._pending), starts, ends))
        self._pending = []

    def freeze(self, position: int) -> RunTable:
        """An immutable table of the samples read so far (the texts not yet in a chunk are
        sealed in one, so a later :meth:`add` starts a new chunk)."""
        self._seal()
        n = len(self.ids)
        index = np.array(self.index, dtype=np.int64)
        order = np.argsort(index, kind="stable")
        ties = np.flatnonzero(np.diff(index[order]) == 0)
        if ties.size:  # samples sharing a dataset index (epochs) go by id, as the store does
            group = 0
            while group < ties.size:
                end = group
                while end + 1 < ties.size and ties[end + 1] == ties[end] + 1:
                    end += 1
                lo, hi = int(ties[group]), int(ties[end]) + 2
                order[lo:hi] = sorted(order[lo:hi].tolist(), key=self.ids.__getitem__)
                group = end + 1
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        meta = {
            key: (np.array(m.rows, dtype=np.int64), np.array(m.codes, dtype=np.int64), m.values)
            for key, m in self.meta.items()
        }
        keys = sorted(k for k, (rows, _, _) in meta.items() if (rank[rows] < _KEYS_FROM).any())
        return RunTable(
            count=n,
            position=position,
            ids=self.ids,
            order=order,
            index=index.astype(np.float64),
            passed=np.array(self.passed, dtype=np.int8),
            weighted=np.array(self.weighted, dtype=np.float64),
            errored=np.array(self.errored, dtype=np.bool_),
            gated=np.array(self.gated, dtype=np.bool_),
            texts={k: v[:n] for k, v in self.texts.items()},
            scores={k: np.array(v, dtype=np.float64) for k, v in self.scores.items()},
            meta=meta,
            chunks=tuple(self.chunks),
            metadata_keys=keys[:_KEYS_MOST],
        )


@dataclass(slots=True, kw_only=True)
class RunTable:
    """One run's index at one moment: ``count`` samples up to the store's insertion
    ``position``, columns in the order they were stored, and ``order``, the samples in dataset
    order (index, then id)."""

    count: int
    position: int
    ids: list[str]
    order: Ints
    index: Floats
    passed: npt.NDArray[np.int8]
    weighted: Floats
    errored: Mask
    gated: Mask
    texts: dict[str, list[str | None]]
    scores: dict[str, Floats]
    meta: dict[str, tuple[Ints, Ints, dict[str, int]]]
    chunks: tuple[_Chunk, ...]
    metadata_keys: list[str]
    _ranks: dict[str, Floats] = field(default_factory=dict)
    # the last few sort orders and search answers over the whole run, newest last
    _sorted: OrderedDict[tuple[str, str], Ints] = field(default_factory=OrderedDict)
    _found: OrderedDict[str, Mask] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def scorer_names(self) -> list[str]:
        """The scorers that scored any sample, sorted."""
        return sorted(self.scores)

    def select(self, query: TableQuery, names: Sequence[str]) -> Ints:
        """The positions of the samples that match ``query``, in its order."""
        query.check(names)
        mask = self._outcome(query.outcome)
        if query.q:
            mask &= self._found_by(query.q.lower())
        if query.scorer is not None:
            values = self.scores.get(query.scorer)
            if values is None:
                mask[:] = False
            else:
                kept = ~np.isnan(values)
                if query.min is not None:
                    kept &= values >= query.min
                if query.max is not None:
                    kept &= values <= query.max
                mask &= kept
        if query.meta is not None:
            mask &= self._meta(query.meta)
        if query.sort == "index" and query.order == "asc":
            return self.order[mask[self.order]]
        # the whole run in the asked order, kept: a subset in that order is the same stable sort
        ordered = self._ordered(query.sort, query.order)
        return ordered[mask[ordered]]

    def _ordered(self, sort: str, order: str) -> Ints:
        """Every sample in ``sort`` order: a stable sort of the dataset order, so ties stay in
        dataset order; samples without a value go last either way."""
        with self._lock:
            found = self._sorted.get((sort, order))
            if found is not None:
                self._sorted.move_to_end((sort, order))
                return found
        key = self._key(sort)[self.order]
        present = ~np.isnan(key)
        shown = self.order[present]
        values = key[present] if order == "asc" else -key[present]
        found = np.concatenate([shown[np.argsort(values, kind="stable")], self.order[~present]])
        with self._lock:
            self._sorted[(sort, order)] = found
            while len(self._sorted) > _KEPT:
                self._sorted.popitem(last=False)
        return found

    def _outcome(self, outcome: Outcome) -> Mask:
        if outcome == "passed":
            return np.equal(self.passed, 1)
        if outcome == "failed":  # an invalid sample neither passed nor failed
            return np.not_equal(self.passed, 1) & np.not_equal(self.passed, _INVALID)
        if outcome == "invalid":
            return np.equal(self.passed, _INVALID)
        if outcome == "gate_failed":
            return self.gated.copy()
        # a malformed judge verdict counts as an error, as in the run's error count
        if outcome == "error":
            return self.errored.copy()
        if outcome == "no_error":
            return ~self.errored
        return np.ones(self.count, dtype=np.bool_)

    def _found_by(self, needle: str) -> Mask:
        """:meth:`_search`, its last few answers kept (paging through one search repeats it)."""
        with self._lock:
            found = self._found.get(needle)
            if found is not None:
                self._found.move_to_end(needle)
                return found
        found = self._search(needle)
        with self._lock:
            self._found[needle] = found
            while len(self._found) > _KEPT:
                self._found.popitem(last=False)
        return found

    def _search(self, needle: str) -> Mask:
        """Samples whose input, prediction or expected text holds ``needle`` (lower-cased)."""
        found: list[int] = []
        size = len(needle)
        for chunk in self.chunks:
            text, starts, ends = chunk.text, chunk.starts, chunk.ends
            at = text.find(needle)
            while at >= 0:
                row = bisect_right(starts, at) - 1
                if at + size <= ends[row]:  # not across two samples' texts
                    found.append(chunk.first + row)
                    at = text.find(needle, ends[row] + 1)
                else:
                    at = text.find(needle, at + 1)
        mask = np.zeros(self.count, dtype=np.bool_)
        mask[np.array(found, dtype=np.int64)] = True
        return mask

    def _meta(self, meta: str) -> Mask:
        mask = np.zeros(self.count, dtype=np.bool_)
        key, eq, value = meta.partition("=")
        found = self.meta.get(key)
        if found is None:
            return mask
        rows, codes, values = found
        if not eq:
            mask[rows] = True
        elif value in values:
            mask[rows[codes == values[value]]] = True
        return mask

    def _key(self, sort: str) -> Floats:
        """The sort key of every sample as numbers, NaN where it has no value."""
        if sort.startswith("score:"):
            values = self.scores.get(sort.removeprefix("score:"))
            return np.full(self.count, np.nan) if values is None else values
        if sort == "index":
            return self.index
        if sort == "weighted_score":
            return self.weighted
        if sort == "passed":
            return np.where(self.passed < 0, np.nan, self.passed.astype(np.float64))
        with self._lock:
            ranked = self._ranks.get(sort)
            if ranked is None:
                texts = self.ids if sort == "id" else self.texts[sort]
                ranked = self._ranks[sort] = _ranks(texts, self.count)
        return ranked


def _ranks(texts: Sequence[str | None], n: int) -> Floats:
    """Each text's rank among the distinct texts (equal texts share one), NaN for None."""
    distinct = sorted({t for t in texts[:n] if t is not None})
    where = {t: float(k) for k, t in enumerate(distinct)}
    return np.array([np.nan if t is None else where[t] for t in texts[:n]], dtype=np.float64)


class SampleIndex:
    """The indexes of recently viewed runs, brought up to date when a run's sample count
    changes.

    Indexing a large run takes seconds, so it happens on a thread of its own: :meth:`ready`
    answers at once (the table, or None while it is being built) and :meth:`table` waits for
    it. A failed build raises in every request waiting for it, and the next request retries.
    """

    def __init__(self, row: Callable[[SampleRecord], dict[str, Any]]) -> None:
        self._row = row
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, RunTable] = OrderedDict()
        self._columns: dict[str, _Columns] = {}
        self._builds: dict[str, tuple[int, Future[RunTable]]] = {}
        self._known: dict[str, tuple[int, list[str], list[str]]] = {}

    @property
    def row(self) -> Callable[[SampleRecord], dict[str, Any]]:
        """How a sample is shown as a table row."""
        return self._row

    def ready(self, store: Store, run_id: str) -> RunTable | None:
        """The run's table if indexed up to the run's last stored sample; else None, with the
        run being indexed in the background."""
        last = TableReads(store.location).last_position(run_id)
        with self._lock:
            cached = self._runs.get(run_id)
            if cached is not None and cached.position == last:
                self._runs.move_to_end(run_id)
                return cached
            self._start(store, run_id, last)
        return None

    def table(self, store: Store, run_id: str) -> RunTable:
        """The run's table, covering at least the samples stored when called (waits)."""
        last = TableReads(store.location).last_position(run_id)
        while True:
            with self._lock:
                cached = self._runs.get(run_id)
                if cached is not None and cached.position >= last:
                    self._runs.move_to_end(run_id)
                    return cached
                started, build = self._start(store, run_id, last)
            table = build.result()
            if started >= last:
                return table
            # that build began before some of this request's samples were stored: go again

    def items(
        self, store: Store, run_id: str, table: RunTable, positions: Ints
    ) -> list[dict[str, Any]]:
        """The table rows of the samples at ``positions``, read from the store in that order."""
        ids = [table.ids[p] for p in positions.tolist()]
        records = TableReads(store.location).records(run_id, ids=ids)
        if len(records) != len(ids):
            # a sample indexed is no longer stored (deleted outside aieval): never list a page
            # short; the next request indexes the run again
            with self._lock:
                self._runs.pop(run_id, None)
                self._columns.pop(run_id, None)
            raise StoreError(
                f"run {run_id}: {len(ids) - len(records)} sample(s) of this page were deleted"
                " from the store while it was listed; ask again"
            )
        return [self._row(record) for record in records]

    def page(self, store: Store, run_id: str, limit: int, offset: int) -> dict[str, Any]:
        """One page of the run in dataset order, read from the store without the index (the
        ``/samples`` answer while the run is being indexed, marked ``"indexed": false``)."""
        reads = TableReads(store.location)
        total = reads.sample_count(run_id)
        records = reads.records(run_id, limit=limit, offset=offset)
        with self._lock:
            known = self._known.get(run_id)
        if known is None or known[0] != total:
            # scorer names and metadata keys scan the run: once per sample count, not per page
            known = (
                total,
                reads.scorer_names(run_id),
                reads.metadata_keys(run_id, _KEYS_FROM, _KEYS_MOST),
            )
            with self._lock:
                self._known[run_id] = known
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

    def _start(self, store: Store, run_id: str, last: int) -> tuple[int, Future[RunTable]]:
        """The run's build in flight (with the run's last insertion position when it began),
        else a new one."""
        current = self._builds.get(run_id)
        if current is not None:
            return current
        build: Future[RunTable] = Future()
        self._builds[run_id] = (last, build)
        thread = threading.Thread(
            target=self._build, args=(store, run_id, build), name="aieval-index", daemon=True
        )
        thread.start()
        return last, build

    def _build(self, store: Store, run_id: str, build: Future[RunTable]) -> None:
        try:
            table = self._grow(store, run_id)
        except BaseException as exc:  # handed to every request waiting for this build
            with self._lock:
                self._columns.pop(run_id, None)
                if self._builds.get(run_id, (0, None))[1] is build:
                    del self._builds[run_id]
            build.set_exception(exc)
            return
        with self._lock:
            self._runs[run_id] = table
            self._runs.move_to_end(run_id)
            while len(self._runs) > _CACHED_RUNS:
                dropped, _ = self._runs.popitem(last=False)
                self._columns.pop(dropped, None)
            if self._builds.get(run_id, (0, None))[1] is build:
                del self._builds[run_id]
            self._known.pop(run_id, None)
        build.set_result(table)

    def _grow(self, store: Store, run_id: str) -> RunTable:
        """Read the samples stored since the run's last build into its columns; from the
        start when the store no longer holds exactly what was read (a sample replaced or
        deleted, or one committed late at an earlier insertion position)."""
        with self._lock:
            known = self._columns.get(run_id)
        columns = known or _Columns()
        self._read(store, run_id, columns)
        reads = TableReads(store.location)
        if known is not None and reads.count_through(run_id, columns.position) != len(columns.ids):
            columns = _Columns()
            self._read(store, run_id, columns)
        with self._lock:
            self._columns[run_id] = columns
        return columns.freeze(columns.position)

    def _read(self, store: Store, run_id: str, columns: _Columns) -> None:
        while True:
            rows, columns.position = TableReads(store.location).index_rows_since(
                run_id, columns.position, _BATCH
            )
            for row in rows:
                columns.add(row)
            if len(rows) < _BATCH:
                return
