"""Writing sample rows, and what a resumed run needs to know of them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from aieval._records import SampleRecord
from aieval.errors import StoreError, UnstorableSampleError
from aieval.store._backend import Execute, Insert
from aieval.store._connection import Connection
from aieval.store._encoding import dumps
from aieval.store._kept_columns import KEPT_INSERT, kept_plain_row, kept_row
from aieval.store._owner import HEARTBEAT_EVERY_S
from aieval.store._plain_samples import (
    PLAIN_SAMPLE_COLUMNS,
    PLAIN_SAMPLE_FIXED,
    PLAIN_SCORE_COLUMNS,
    PLAIN_SCORE_FIXED,
    PlainSamples,
    plain_rows,
)
from aieval.store._schema import (
    CALL_COLUMNS,
    GRADED_COLUMNS,
    SAMPLE_COLUMNS,
    VALUE_COLUMNS,
    VERDICT_COLUMNS,
)
from aieval.store._verdict_columns import graded_columns, value_rows, verdict_columns
from aieval.store._verdict_text import verdict_text

__all__ = ["SampleWriter"]

log = logging.getLogger("aieval")

_SAMPLE_COLUMNS = (*SAMPLE_COLUMNS.split(", "), *VERDICT_COLUMNS, *GRADED_COLUMNS)
_SCORE_COLUMNS = (
    "run_id", "sample_id", "scorer", "value", "raw", "reason", "error", "metadata", "unreadable"
)  # fmt: skip
_SCORE_METADATA = _SCORE_COLUMNS.index("metadata")
_CALL_COLUMNS = tuple(CALL_COLUMNS.split(", "))


class SampleWriter(Connection):
    """Each finished sample with its scores and model calls, committed as it ends."""

    def record_sample(self, run_id: str, sample: SampleRecord) -> None:
        """Write one finished sample, its scores and model calls in one committed transaction."""
        self.record_samples(run_id, [sample])

    def record_samples(self, run_id: str, samples: list[SampleRecord]) -> None:
        """Write finished samples in one committed transaction.

        A lost connection (PostgreSQL: a server restart, a network cut) is retried once on a
        new connection, unless the batch is found stored already (its commit went through);
        a second failure raises.

        Raises:
            StoreError: the batch could not be stored; none of it is (it is one transaction).
            UnstorableSampleError: a sample holds a value the store cannot keep (an integer
                beyond 64 bits); none of the batch is stored, and the store is fine.
        """
        if not samples:
            return
        now = time.time()
        sample_rows = []
        score_rows = []
        call_rows = []
        value_rows_ = []
        for s in samples:
            sample_rows.append(
                (
                    run_id,
                    s.id,
                    s.index,
                    dumps(s.input),
                    dumps(s.expected),
                    s.prediction,
                    dumps(s.metadata) if s.metadata else None,
                    s.error,
                    None if s.passed is None else int(s.passed),
                    s.latency_s,
                    s.input_tokens,
                    s.output_tokens,
                    s.cost,
                    s.retries,
                    int(s.cached),
                    _extra(s),
                    now,
                    None if s.verdict is None else verdict_text(s.verdict),
                    *verdict_columns(s.verdict),
                    *graded_columns(s.verdict, s.epoch),
                )
            )
            value_rows_ += [(run_id, s.id, *row) for row in value_rows(s.verdict)]
            for scorer_name, score in s.scores.items():
                score_rows.append(
                    (
                        run_id,
                        s.id,
                        scorer_name,
                        score.value,
                        None if score.raw is None else dumps(score.raw),
                        score.reason,
                        score.error,
                        dumps(score.metadata) if score.metadata else None,
                        score.unreadable,
                    )
                )
            for c in s.calls:
                call_rows.append(
                    (
                        run_id,
                        s.id,
                        c.purpose,
                        c.provider,
                        c.model,
                        c.latency_s,
                        c.input_tokens,
                        c.output_tokens,
                        c.cost,
                        c.retries,
                        int(c.cached),
                        c.error,
                    )
                )
        inserts = (
            Insert("samples", _SAMPLE_COLUMNS, sample_rows),
            Insert("scores", _SCORE_COLUMNS, score_rows),
            Insert("model_calls", _CALL_COLUMNS, call_rows),
            Insert("sample_values", VALUE_COLUMNS, value_rows_),
        )
        kept = _kept(run_id, samples, sample_rows, score_rows)
        self._write_batch(run_id, inserts, kept, samples[0].id, now)

    def record_plain(self, run_id: str, batch: PlainSamples) -> None:
        """:meth:`record_samples` of a batch of plain samples given as columns: the same rows,
        built without a record per sample and per score."""
        if not len(batch):
            return
        rows = plain_rows(batch)
        fixed = (("run_id", run_id), *PLAIN_SAMPLE_FIXED)
        inserts = (
            Insert("samples", PLAIN_SAMPLE_COLUMNS, rows.samples, fixed),
            Insert(
                "scores", PLAIN_SCORE_COLUMNS, rows.scores, (("run_id", run_id), *PLAIN_SCORE_FIXED)
            ),
        )
        kept = kept_plain_row(
            run_id, rows.samples, PLAIN_SAMPLE_COLUMNS, batch.scorers, batch.values, dict(fixed)
        )
        writes = None if kept is None else _inserting(kept)
        self._write_batch(run_id, inserts, writes, batch.ids[0], rows.now)

    def _write_batch(
        self,
        run_id: str,
        inserts: tuple[Insert, ...],
        kept: Callable[[Execute], None] | None,
        first: str,
        now: float,
    ) -> None:
        """Write a batch's rows in one committed transaction (see :meth:`record_samples`)."""
        beat = now - self._beat_at >= HEARTBEAT_EVERY_S
        then = ("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id)) if beat else None
        db = self._db

        with self._lock:
            try:
                try:
                    db.write_rows(inserts, then, kept)
                except Exception as exc:
                    if not db.lost(exc):
                        raise
                    # one transparent attempt on a new connection; a batch whose commit went
                    # through before the connection dropped is not written twice
                    log.warning(
                        "lost the connection to the store at %s while writing samples of run"
                        " %s (%s): connecting again",
                        self.location,
                        run_id,
                        self._why(exc),
                    )
                    if not db.query(
                        "SELECT 1 FROM samples WHERE run_id = ? AND sample_id = ?", (run_id, first)
                    ):
                        db.write_rows(inserts, then, kept)
            except Exception as exc:
                if db.bad_value(exc):  # the samples' fault, not the store's
                    raise UnstorableSampleError(
                        f"a sample of run {run_id} holds a value the store cannot keep: "
                        f"{type(exc).__name__}: {self._why(exc)}"
                    ) from exc
                raise StoreError(
                    f"cannot write samples of run {run_id} to {self.location}: "
                    f"{type(exc).__name__}: {self._why(exc)}"
                ) from exc
            if beat:
                self._beat_at = now

    def completed_sample_ids(self, run_id: str) -> set[str]:
        """Ids of the samples already stored for ``run_id``."""
        rows = self._read("SELECT sample_id FROM samples WHERE run_id = ?", (run_id,))
        return {row[0] for row in rows}

    def count_samples(self, run_id: str) -> int:
        """How many samples are stored for ``run_id``."""
        row = self._read_one("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
        return int(row[0]) if row is not None else 0

    def sample_counts(self, run_ids: Sequence[str]) -> dict[str, int]:
        """How many samples are stored for each of ``run_ids`` (0 for a run with none), in
        one query per :attr:`Backend.max_members` runs."""
        counts = dict.fromkeys(run_ids, 0)
        ids = list(counts)
        step = self._db.max_members
        for start in range(0, len(ids), step):
            where, args = self._db.member_of("run_id", ids[start : start + step])
            for run_id, n in self._read(
                f"SELECT run_id, COUNT(*) FROM samples WHERE {where} GROUP BY run_id", args
            ):
                counts[run_id] = int(n)
        return counts


def _kept(
    run_id: str,
    samples: list[SampleRecord],
    sample_rows: list[tuple[Any, ...]],
    score_rows: list[tuple[Any, ...]],
) -> Callable[[Execute], None] | None:
    """The batch's row of its run's kept columns, inserted in the batch's transaction (``None``
    when the batch keeps none)."""
    metadata = [row[_SCORE_METADATA] for row in score_rows]
    kept = kept_row(run_id, samples, sample_rows, _SAMPLE_COLUMNS, metadata)
    return None if kept is None else _inserting(kept)


def _inserting(kept: tuple[Any, ...]) -> Callable[[Execute], None]:
    """What inserts the batch's ``run_columns`` row ``kept`` in the batch's transaction."""

    def insert(execute: Execute) -> None:
        execute(KEPT_INSERT, kept)

    return insert


def _extra(sample: SampleRecord) -> str | None:
    """The sample's ``extra`` as stored, with its epoch (key ``epoch``) in a run of epochs."""
    extra = sample.extra if sample.epoch is None else {**sample.extra, "epoch": sample.epoch}
    return dumps(extra) if extra else None
