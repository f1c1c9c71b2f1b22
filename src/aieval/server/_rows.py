"""Reading a run's samples for the sample table: one pass over the store, only what a row shows.

The table needs each sample's texts, flags, evaluation and scores (value, reason, error,
metadata), never its model calls or raw scorer outputs. Reading just that, in two queries over
the whole run on a connection of its own (so a report being built on the store's connection
does not hold it up), costs a fraction of :meth:`Store.iter_samples`, which builds every
record in full through per-page queries.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
from aieval.core._records import split_epoch
from aieval.core._stored import adapt_record, config_threshold
from aieval.errors import StoreError
from aieval.store import StoreLocation
from aieval.store._backend import Backend
from aieval.store._open import open_backend

__all__ = ["metadata_keys", "sample_count", "scorer_names", "table_records"]

_COLUMNS = "sample_id, idx, input, expected, prediction, metadata, error, passed, extra, verdict"


def table_records(
    location: StoreLocation, run_id: str, *, limit: int | None = None, offset: int = 0
) -> list[SampleRecord]:
    """The run's samples in dataset order, as the table reads them.

    The records carry no model calls and no raw scorer values (``calls`` is empty, ``raw`` is
    None): they feed the table's rows, never a report or a sample's own page.
    """
    with _connect(location) as db:
        rows = db.query(
            f"SELECT {_COLUMNS} FROM samples WHERE run_id = ? ORDER BY idx, sample_id"
            " LIMIT ? OFFSET ?",
            (run_id, db.no_limit if limit is None else limit, offset),
        )
        if limit is None:
            score_rows = db.query(
                "SELECT sample_id, scorer, value, reason, error, metadata, unreadable FROM scores"
                " WHERE run_id = ? ORDER BY rowid",
                (run_id,),
            )
        elif rows:
            ids = [row[0] for row in rows]
            score_rows = db.query(
                "SELECT sample_id, scorer, value, reason, error, metadata, unreadable FROM scores"
                f" WHERE run_id = ? AND sample_id IN ({', '.join('?' * len(ids))})"
                " ORDER BY rowid",
                (run_id, *ids),
            )
        else:
            score_rows = []
        config = db.one("SELECT config FROM runs WHERE id = ?", (run_id,))
    threshold = config_threshold(_loads(config[0]) if config is not None else None)
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
    with _connect(location) as db:
        row = db.one("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
    return 0 if row is None else int(row[0])


def scorer_names(location: StoreLocation, run_id: str) -> list[str]:
    """The names of the scorers that scored any sample of the run, sorted."""
    with _connect(location) as db:
        rows = db.query("SELECT DISTINCT scorer FROM scores WHERE run_id = ?", (run_id,))
    return sorted(row[0] for row in rows)


def metadata_keys(
    location: StoreLocation, run_id: str, first: int = 5000, most: int = 50
) -> list[str]:
    """The metadata keys of the run's first ``first`` samples (sorted, at most ``most``)."""
    with _connect(location) as db:
        rows = db.query(
            "SELECT metadata FROM samples WHERE run_id = ? ORDER BY idx, sample_id LIMIT ?",
            (run_id, first),
        )
    keys: set[str] = set()
    for (text,) in rows:
        found = _loads(text)
        if isinstance(found, dict):
            keys.update(str(k) for k in found)
    return sorted(keys)[:most]


@contextmanager
def _connect(location: StoreLocation) -> Iterator[Backend]:
    """A connection of its own to the store (texts decoded as the store writes them)."""
    try:
        db = open_backend(location)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(
            f"cannot read the store at {location}: {location.scrub(str(exc))}"
        ) from exc
    try:
        yield db
    except db.errors as exc:
        raise StoreError(
            f"cannot read the store at {location}: {location.scrub(str(exc))}"
        ) from exc
    finally:
        db.close()


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
