"""A run's samples as a viewer's sample table reads them: one pass over the store, only what a
row shows.

The table needs each sample's texts, flags, verdict and scores (value, reason, error,
metadata), never its model calls or raw scorer outputs. Reading just that, in two queries over
the whole run on a pooled connection (:mod:`aieval.store._read_pool`, so a report being built
on the store's own connection does not hold it up), costs a fraction of
:meth:`Store.iter_samples`, which builds every record in full through per-page queries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from aieval._numbers import finite
from aieval.core import INVALID, SampleRecord, ScoreRecord, Verdict, split_epoch
from aieval.core._stored import LEGACY_UNREADABLE, adapt_record, config_threshold
from aieval.store._backend import Backend
from aieval.store._location import StoreLocation
from aieval.store._read_pool import ReadPool, pooled

__all__ = ["IndexRow", "TableReads"]

_COLUMNS = "sample_id, idx, input, expected, prediction, metadata, error, passed, extra, verdict"
_SCORE_COLUMNS = "sample_id, scorer, value, reason, error, metadata, unreadable"
# the most parameters one ``IN (...)`` list carries (SQLite allows 32,766; PostgreSQL 65,535)
_IDS_PER_QUERY = 5000

T = TypeVar("T")


@dataclass(slots=True)
class IndexRow:
    """What a table's index keeps of one sample, read without building the full record (a
    stored verdict gives its weighted score and gates)."""

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
    #: neither passed nor failed: a conversation whose simulated user failed fidelity
    invalid: bool = False


class TableReads:
    """The sample-table reads of the store at ``location``, each on a connection of ``pool``
    (the process's :data:`~aieval.store.READ_POOL` when None), without waiting for a
    :class:`~aieval.store.Store`'s lock. A failure is a :class:`~aieval.errors.StoreError`
    naming the location (its password masked)."""

    def __init__(self, location: StoreLocation, pool: ReadPool | None = None) -> None:
        self.location = location
        self.pool = pool

    def _read(self, action: Callable[[Backend], T]) -> T:
        return pooled(self.location, action, self.pool)

    def records(
        self,
        run_id: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        ids: Sequence[str] | None = None,
    ) -> list[SampleRecord]:
        """The run's samples in dataset order (or those of ``ids``, in that order), as the
        table reads them.

        The records carry no model calls and no raw scorer values (``calls`` is empty, ``raw``
        is None): they feed the table's rows, never a report or a sample's own page.
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
                    f"SELECT {_SCORE_COLUMNS} FROM scores WHERE run_id = ? ORDER BY rowid",
                    (run_id,),
                )
            else:
                score_rows = _scores_of(db, run_id, [row[0] for row in rows])
            return _records(db, run_id, rows, score_rows)

        return self._read(read)

    def index_rows_since(self, run_id: str, after: int, limit: int) -> tuple[list[IndexRow], int]:
        """Up to ``limit`` samples of the run stored after insertion position ``after``
        (SQLite's ``rowid``, PostgreSQL's ``seq``), in the order they were stored, and the
        position of the last one (``after`` when there is none): what an index reads as a run
        grows."""

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

        return self._read(read)

    def count_through(self, run_id: str, position: int) -> int:
        """How many samples of the run were stored at insertion positions up to ``position``."""
        row = self._read(
            lambda db: db.one(
                "SELECT COUNT(*) FROM samples WHERE run_id = ? AND rowid <= ?", (run_id, position)
            )
        )
        return 0 if row is None else int(row[0])

    def sample_count(self, run_id: str) -> int:
        """How many samples of the run are stored."""
        row = self._read(
            lambda db: db.one("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
        )
        return 0 if row is None else int(row[0])

    def last_position(self, run_id: str) -> int:
        """The insertion position of the run's last stored sample (0 when none): it changes
        whenever a sample is added (samples are deleted only with their run). An index lookup
        on both backends (``samples_run`` on SQLite, ``samples_seq`` on PostgreSQL)."""
        row = self._read(
            lambda db: db.one("SELECT MAX(rowid) FROM samples WHERE run_id = ?", (run_id,))
        )
        return 0 if row is None or row[0] is None else int(row[0])

    def scorer_names(self, run_id: str) -> list[str]:
        """The names of the scorers that scored any sample of the run, sorted."""
        rows = self._read(
            lambda db: db.query("SELECT DISTINCT scorer FROM scores WHERE run_id = ?", (run_id,))
        )
        return sorted(row[0] for row in rows)

    def metadata_keys(self, run_id: str, first: int = 5000, most: int = 50) -> list[str]:
        """The metadata keys of the run's first ``first`` samples (sorted, at most ``most``)."""
        rows = self._read(
            lambda db: db.query(
                "SELECT metadata FROM samples WHERE run_id = ? ORDER BY idx, sample_id LIMIT ?",
                (run_id, first),
            )
        )
        keys: set[str] = set()
        for (text,) in rows:
            found = _loads(text)
            if isinstance(found, dict):
                keys.update(str(k) for k in found)
        return sorted(keys)[:most]


def _index_row(row: tuple[Any, ...], scores: list[tuple[Any, ...]]) -> IndexRow:
    sample_id = row[0]
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
        reasons = data.get("reasons")
        invalid = isinstance(reasons, list) and any(
            isinstance(r, dict) and r.get("kind") == INVALID for r in reasons
        )
    else:  # not the usual shape: read as the sample's page reads it (or fail as it does)
        verdict = Verdict.from_dict(data, f"sample {sample_id!r}")
        weighted, gate_failed = verdict.weighted_score, any(not g.passed for g in verdict.gates)
        invalid = verdict.invalid
    return IndexRow(
        **_columns(row),
        scores={s[1]: (s[2], _problem(s)) for s in scores},
        weighted_score=weighted,
        gate_failed=gate_failed,
        invalid=invalid,
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
        invalid=verdict.invalid,
    )


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


def _columns(row: tuple[Any, ...]) -> dict[str, Any]:
    """The sample row's columns from its id to ``passed``, decoded, as the keywords a record
    and an index row both take."""
    sample_id, idx, input_json, expected_json, prediction, meta, error, passed = row[:8]
    return {
        "id": sample_id,
        "index": idx,
        "input": _loads(input_json),
        "expected": _loads(expected_json),
        "prediction": prediction,
        "metadata": _loads(meta) or {},
        "error": error,
        "passed": None if passed is None else bool(passed),
    }


def _record(row: tuple[Any, ...], scores: dict[str, ScoreRecord]) -> SampleRecord:
    sample_id, extra, verdict = row[0], row[8], row[9]
    extra_data, epoch = split_epoch(_loads(extra) or {})
    return SampleRecord(
        **_columns(row),
        scores=scores,
        extra=extra_data,
        epoch=epoch,
        verdict=None
        if verdict is None
        else Verdict.from_dict(_loads(verdict), f"sample {sample_id!r}"),
    )
