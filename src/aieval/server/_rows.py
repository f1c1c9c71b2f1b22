"""Reading a run's samples for the sample table: one pass over the store, only what a row shows.

The table needs each sample's texts, flags, evaluation and scores (value, reason, error,
metadata), never its model calls or raw scorer outputs. Reading just that, in two queries over
the whole run on a connection of its own (so a report being built on the store's connection
does not hold it up), costs a fraction of :meth:`Store.iter_samples`, which builds every
record in full through per-page queries.

The reads go through :data:`READS`, a few long-lived connections per store shared by the
server's threads (on PostgreSQL a new connection costs a handshake and an authentication per
request); a connection that fails is dropped, and a read on a reused one that fails (the
database restarted) is tried once more on a new connection.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
from aieval.core._records import split_epoch
from aieval.core._stored import LEGACY_UNREADABLE, adapt_record, config_threshold
from aieval.core._verdict import finite
from aieval.errors import StoreError
from aieval.store import StoreLocation
from aieval.store._backend import Backend
from aieval.store._open import open_backend

__all__ = [
    "READS",
    "IndexRow",
    "ReadPool",
    "count_through",
    "index_rows_since",
    "last_position",
    "metadata_keys",
    "sample_count",
    "scorer_names",
    "table_records",
]

_COLUMNS = "sample_id, idx, input, expected, prediction, metadata, error, passed, extra, verdict"
_SCORE_COLUMNS = "sample_id, scorer, value, reason, error, metadata, unreadable"
# the most parameters one ``IN (...)`` list carries (SQLite allows 32,766; PostgreSQL 65,535)
_IDS_PER_QUERY = 5000

T = TypeVar("T")


def table_records(
    location: StoreLocation,
    run_id: str,
    *,
    limit: int | None = None,
    offset: int = 0,
    ids: Sequence[str] | None = None,
) -> list[SampleRecord]:
    """The run's samples in dataset order (or those of ``ids``, in that order), as the table
    reads them.

    The records carry no model calls and no raw scorer values (``calls`` is empty, ``raw`` is
    None): they feed the table's rows, never a report or a sample's own page.
    """

    def read(db: Backend) -> list[SampleRecord]:
        if ids is not None:
            rows = []
            for part in _parts(list(ids)):
                rows += db.query(
                    f"SELECT {_COLUMNS} FROM samples WHERE run_id = ?"
                    f" AND sample_id IN ({', '.join('?' * len(part))})",
                    (run_id, *part),
                )
            where = {sample_id: n for n, sample_id in enumerate(ids)}
            rows.sort(key=lambda row: where[row[0]])
        else:
            rows = db.query(
                f"SELECT {_COLUMNS} FROM samples WHERE run_id = ? ORDER BY idx, sample_id"
                " LIMIT ? OFFSET ?",
                (run_id, db.no_limit if limit is None else limit, offset),
            )
        if limit is None and ids is None:
            score_rows = db.query(
                f"SELECT {_SCORE_COLUMNS} FROM scores WHERE run_id = ? ORDER BY rowid", (run_id,)
            )
        else:
            score_rows = _scores_of(db, run_id, [row[0] for row in rows])
        return _records(db, run_id, rows, score_rows)

    return _read(location, read)


@dataclass(slots=True)
class IndexRow:
    """What the table's index keeps of one sample: what :func:`sample_item` shows of it, read
    without building the full record (a stored verdict gives its weighted score and gates)."""

    id: str
    index: int
    input: Any
    expected: Any
    prediction: str | None
    metadata: dict[str, Any]
    error: str | None
    passed: bool | None
    #: each scorer's value, and whether it failed or rests on a malformed judge verdict
    scores: dict[str, tuple[float | None, bool]]
    weighted_score: float | None
    gate_failed: bool


def index_rows_since(
    location: StoreLocation, run_id: str, after: int, limit: int
) -> tuple[list[IndexRow], int]:
    """Up to ``limit`` samples of the run stored after insertion position ``after`` (SQLite's
    ``rowid``, PostgreSQL's ``seq``), in the order they were stored, and the position of the
    last one (``after`` when there is none): what an index reads as a run grows."""

    def read(db: Backend) -> tuple[list[IndexRow], int]:
        found = db.query(
            f"SELECT rowid, {_COLUMNS} FROM samples WHERE run_id = ? AND rowid > ?"
            " ORDER BY rowid LIMIT ?",
            (run_id, after, limit),
        )
        if not found:
            return [], after
        rows = [row[1:] for row in found]
        scores: dict[Any, list[tuple[Any, ...]]] = {}
        for score in _scores_of(db, run_id, [r[0] for r in rows]):
            scores.setdefault(score[0], []).append(score)
        threshold: list[float] = []  # the run's pass threshold, read if a sample needs it
        out = []
        for row in rows:
            own = scores.get(row[0], [])
            if row[9] is None:  # stored before verdicts were: derived from the full record
                if not threshold:
                    config = db.one("SELECT config FROM runs WHERE id = ?", (run_id,))
                    threshold.append(config_threshold(_loads(config[0]) if config else None))
                out.append(_derived_row(row, own, threshold[0]))
            else:
                out.append(_index_row(row, own))
        return out, int(found[-1][0])

    return _read(location, read)


def _index_row(row: tuple[Any, ...], scores: list[tuple[Any, ...]]) -> IndexRow:
    sample_id, idx, input_json, expected_json, prediction, meta, error, passed = row[:8]
    data = _loads(row[9])
    gates = data.get("gates") if isinstance(data, dict) else None
    if (
        isinstance(data, dict)
        and isinstance(data.get("passed"), bool)
        and (gates is None or isinstance(gates, list))
        and all(isinstance(g, dict) and "name" in g and "passed" in g for g in gates or ())
    ):
        weighted, gate_failed = (
            finite(data.get("weighted_score")),
            any(not bool(g["passed"]) for g in gates or ()),
        )
    else:  # not the usual shape: read as the sample's page reads it (or fail as it does)
        verdict = Verdict.from_dict(data, f"sample {sample_id!r}")
        weighted, gate_failed = verdict.weighted_score, any(not g.passed for g in verdict.gates)
    return IndexRow(
        id=sample_id,
        index=idx,
        input=_loads(input_json),
        expected=_loads(expected_json),
        prediction=prediction,
        metadata=_loads(meta) or {},
        error=error,
        passed=None if passed is None else bool(passed),
        scores={s[1]: (s[2], _problem(s)) for s in scores},
        weighted_score=weighted,
        gate_failed=gate_failed,
    )


def _problem(score: tuple[Any, ...]) -> bool:
    """Whether a score row failed or rests on a malformed verdict (as :func:`adapt_record`
    reads an earlier store's ``metadata["unreadable"]``)."""
    _, _, _, _, error, meta, unreadable = score
    if error:
        return True
    if unreadable is None and meta is not None:
        found = _loads(meta)
        legacy = found.get(LEGACY_UNREADABLE) if isinstance(found, dict) else None
        unreadable = legacy if isinstance(legacy, str) and legacy else None
    return bool(unreadable)


def _derived_row(row: tuple[Any, ...], scores: list[tuple[Any, ...]], threshold: float) -> IndexRow:
    record = _records_of([row], scores, threshold)[0]
    verdict = record.verdict
    assert verdict is not None  # adapt_record derives one
    return IndexRow(
        id=record.id,
        index=record.index,
        input=record.input,
        expected=record.expected,
        prediction=record.prediction,
        metadata=record.metadata,
        error=record.error,
        passed=record.passed,
        scores={n: (s.value, bool(s.error or s.malformed)) for n, s in record.scores.items()},
        weighted_score=verdict.weighted_score,
        gate_failed=any(not g.passed for g in verdict.gates),
    )


def count_through(location: StoreLocation, run_id: str, position: int) -> int:
    """How many samples of the run were stored at insertion positions up to ``position``."""
    row = _read(
        location,
        lambda db: db.one(
            "SELECT COUNT(*) FROM samples WHERE run_id = ? AND rowid <= ?", (run_id, position)
        ),
    )
    return 0 if row is None else int(row[0])


def _parts(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), _IDS_PER_QUERY):
        yield ids[start : start + _IDS_PER_QUERY]


def _scores_of(db: Backend, run_id: str, ids: list[str]) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    for part in _parts(ids):
        found += db.query(
            f"SELECT {_SCORE_COLUMNS} FROM scores WHERE run_id = ?"
            f" AND sample_id IN ({', '.join('?' * len(part))}) ORDER BY rowid",
            (run_id, *part),
        )
    return found


def _records(
    db: Backend, run_id: str, rows: list[tuple[Any, ...]], score_rows: list[tuple[Any, ...]]
) -> list[SampleRecord]:
    config = db.one("SELECT config FROM runs WHERE id = ?", (run_id,))
    threshold = config_threshold(_loads(config[0]) if config is not None else None)
    return _records_of(rows, score_rows, threshold)


def _records_of(
    rows: list[tuple[Any, ...]], score_rows: list[tuple[Any, ...]], threshold: float
) -> list[SampleRecord]:
    scores: dict[Any, dict[str, ScoreRecord]] = {}
    for row in score_rows:
        _, name, value, reason, error, meta, unreadable = row
        scores.setdefault(row[0], {})[name] = ScoreRecord(
            value=value,
            reason=reason,
            error=error,
            metadata=_loads(meta) or {},
            unreadable=unreadable,
        )
    return [adapt_record(_record(row, scores.get(row[0], {})), threshold) for row in rows]


def sample_count(location: StoreLocation, run_id: str) -> int:
    """How many samples of the run are stored (without waiting for the store's own lock)."""
    row = _read(
        location, lambda db: db.one("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
    )
    return 0 if row is None else int(row[0])


def last_position(location: StoreLocation, run_id: str) -> int:
    """The insertion position of the run's last stored sample (0 when none): it changes
    whenever a sample is added (samples are deleted only with their run). An index lookup on
    both backends (``samples_run`` on SQLite, ``samples_seq`` on PostgreSQL)."""
    row = _read(
        location, lambda db: db.one("SELECT MAX(rowid) FROM samples WHERE run_id = ?", (run_id,))
    )
    return 0 if row is None or row[0] is None else int(row[0])


def scorer_names(location: StoreLocation, run_id: str) -> list[str]:
    """The names of the scorers that scored any sample of the run, sorted."""
    rows = _read(
        location,
        lambda db: db.query("SELECT DISTINCT scorer FROM scores WHERE run_id = ?", (run_id,)),
    )
    return sorted(row[0] for row in rows)


def metadata_keys(
    location: StoreLocation, run_id: str, first: int = 5000, most: int = 50
) -> list[str]:
    """The metadata keys of the run's first ``first`` samples (sorted, at most ``most``)."""
    rows = _read(
        location,
        lambda db: db.query(
            "SELECT metadata FROM samples WHERE run_id = ? ORDER BY idx, sample_id LIMIT ?",
            (run_id, first),
        ),
    )
    keys: set[str] = set()
    for (text,) in rows:
        found = _loads(text)
        if isinstance(found, dict):
            keys.update(str(k) for k in found)
    return sorted(keys)[:most]


class ReadPool:
    """At most ``size`` read connections per store, each used by one thread at a time.

    A read takes an idle connection, or opens one while fewer than ``size`` are open, or
    waits (at most ``wait_s``) for one to be given back; a connection whose read failed is
    closed, not given back. :attr:`opened` counts the connections ever opened.
    """

    def __init__(self, size: int = 6, wait_s: float = 120.0) -> None:
        self.size = size
        self.wait_s = wait_s
        self.opened = 0
        self._idle: dict[str, list[Backend]] = {}
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def read(self, location: StoreLocation, action: Callable[[Backend], T]) -> T:
        """``action`` on a pooled connection; if that connection was reused and its read fails
        (a restarted database closed it), once more on a new one (reads can be repeated)."""
        key = _key(location)
        with self._lock:
            slots = self._slots.setdefault(key, threading.BoundedSemaphore(self.size))
        if not slots.acquire(timeout=self.wait_s):
            raise StoreError(
                f"cannot read the store at {location}: its {self.size} read connections stayed"
                f" busy for {self.wait_s:.0f} s"
            )
        try:
            with self._lock:
                idle = self._idle.get(key)
                db = idle.pop() if idle else None
            if db is not None:
                try:
                    return self._use(key, db, action)
                except db.errors:
                    self.clear(location)  # the others were most likely closed with it
            return self._use(key, self._open(location), action)
        finally:
            slots.release()

    def _use(self, key: str, db: Backend, action: Callable[[Backend], T]) -> T:
        try:
            result = action(db)
        except BaseException:
            with contextlib.suppress(*db.errors):
                db.close()
            raise
        with self._lock:
            self._idle.setdefault(key, []).append(db)
        return result

    def _open(self, location: StoreLocation) -> Backend:
        db = open_backend(location)
        with self._lock:
            self.opened += 1
        return db

    def clear(self, location: StoreLocation | None = None) -> None:
        """Close the idle connections to ``location`` (every store's when None)."""
        with self._lock:
            if location is None:
                dropped = [db for idle in self._idle.values() for db in idle]
                self._idle.clear()
            else:
                dropped = self._idle.pop(_key(location), [])
        for db in dropped:
            with contextlib.suppress(*db.errors):
                db.close()


#: The server's read connections.
READS = ReadPool()


def _key(location: StoreLocation) -> str:
    return location.connect_url() if location.path is None else str(location.path)


def _read(location: StoreLocation, action: Callable[[Backend], T]) -> T:
    """``action`` on a pooled connection to the store, its failures as :class:`StoreError`."""
    try:
        return READS.read(location, action)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(
            f"cannot read the store at {location}: {location.scrub(str(exc))}"
        ) from exc


_decode = json.JSONDecoder().raw_decode


def _loads(text: str | None) -> Any:
    # the decoder's own entry point: json.loads spends more per call on checks and regular
    # expressions than on decoding a short text; the end must still be the text's end
    if text is None:
        return None
    try:
        value, end = _decode(text)
    except ValueError:
        return json.loads(text)  # raises json's own error, naming the position
    return value if end == len(text) else json.loads(text)


def _record(row: tuple[Any, ...], scores: dict[str, ScoreRecord]) -> SampleRecord:
    sample_id, idx, input_json, expected_json, prediction, meta, error, passed, extra, verdict = row
    extra_data, epoch = split_epoch(_loads(extra) or {})
    return SampleRecord(
        id=sample_id,
        index=idx,
        input=_loads(input_json),
        expected=_loads(expected_json),
        prediction=prediction,
        metadata=_loads(meta) or {},
        scores=scores,
        error=error,
        passed=None if passed is None else bool(passed),
        extra=extra_data,
        epoch=epoch,
        verdict=None
        if verdict is None
        else Verdict.from_dict(_loads(verdict), f"sample {sample_id!r}"),
    )
