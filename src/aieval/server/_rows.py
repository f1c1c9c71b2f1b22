"""Reading a run's samples for the sample table: one pass over SQLite, only what a row shows.

The table needs each sample's texts, flags, evaluation and scores (value, reason, error,
metadata), never its model calls or raw scorer outputs. Reading just that, in two queries over
the whole run on a connection of its own (so a report being built on the store's connection
does not hold it up), costs a fraction of :meth:`Store.iter_samples`, which builds every
record in full through per-page queries.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
from aieval.core._records import split_epoch
from aieval.core._stored import adapt_record, config_threshold
from aieval.store._encoding import from_db, to_db

__all__ = ["metadata_keys", "sample_count", "scorer_names", "table_records"]

_COLUMNS = "sample_id, idx, input, expected, prediction, metadata, error, passed, extra, verdict"


def table_records(
    path: Path, run_id: str, *, limit: int | None = None, offset: int = 0
) -> list[SampleRecord]:
    """The run's samples in dataset order, as the table reads them.

    The records carry no model calls and no raw scorer values (``calls`` is empty, ``raw`` is
    None): they feed the table's rows, never a report or a sample's own page.
    """
    with closing(_connect(path)) as db:
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM samples WHERE run_id = ? ORDER BY idx, sample_id"
            " LIMIT ? OFFSET ?",
            (to_db(run_id), -1 if limit is None else limit, offset),
        ).fetchall()
        if limit is None:
            score_rows = db.execute(
                "SELECT sample_id, scorer, value, reason, error, metadata, unreadable FROM scores"
                " WHERE run_id = ? ORDER BY rowid",
                (to_db(run_id),),
            ).fetchall()
        else:
            ids = [row[0] for row in rows]
            score_rows = db.execute(
                "SELECT sample_id, scorer, value, reason, error, metadata, unreadable FROM scores"
                f" WHERE run_id = ? AND sample_id IN ({', '.join('?' * len(ids))})"
                " ORDER BY rowid",
                (to_db(run_id), *ids),
            ).fetchall()
        config = db.execute("SELECT config FROM runs WHERE id = ?", (to_db(run_id),)).fetchone()
    threshold = config_threshold(_loads(_text(config)[0]) if config is not None else None)
    scores: dict[Any, dict[str, ScoreRecord]] = {}
    for row in score_rows:
        _, name, value, reason, error, meta, unreadable = _text(row)
        scores.setdefault(row[0], {})[name] = ScoreRecord(
            value=value,
            reason=reason,
            error=error,
            metadata=_loads(meta) or {},
            unreadable=unreadable,
        )
    return [adapt_record(_record(row, scores.get(row[0], {})), threshold) for row in rows]


def sample_count(path: Path, run_id: str) -> int:
    """How many samples of the run are stored (without waiting for the store's own lock)."""
    with closing(_connect(path)) as db:
        row = db.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (to_db(run_id),))
        return int(row.fetchone()[0])


def scorer_names(path: Path, run_id: str) -> list[str]:
    """The names of the scorers that scored any sample of the run, sorted."""
    with closing(_connect(path)) as db:
        rows = db.execute(
            "SELECT DISTINCT scorer FROM scores WHERE run_id = ?", (to_db(run_id),)
        ).fetchall()
    return sorted(from_db(row[0]) for row in rows)


def metadata_keys(path: Path, run_id: str, first: int = 5000, most: int = 50) -> list[str]:
    """The metadata keys of the run's first ``first`` samples (sorted, at most ``most``)."""
    with closing(_connect(path)) as db:
        rows = db.execute(
            "SELECT metadata FROM samples WHERE run_id = ? ORDER BY idx, sample_id LIMIT ?",
            (to_db(run_id), first),
        ).fetchall()
    keys: set[str] = set()
    for (text,) in rows:
        found = _loads(from_db(text))
        if isinstance(found, dict):
            keys.update(str(k) for k in found)
    return sorted(keys)[:most]


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=30.0)


def _text(row: tuple[Any, ...]) -> tuple[Any, ...]:
    # a string SQLite could not hold as UTF-8 is stored as bytes (see store._encoding)
    return tuple(map(from_db, row)) if bytes in map(type, row) else row


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
    sample_id, idx, input_json, expected_json, prediction, meta, error, passed, extra, verdict = (
        _text(row)
    )
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
