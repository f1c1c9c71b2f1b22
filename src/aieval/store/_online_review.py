"""Items added to an existing review queue as online scoring finds them (a queue built by
``aieval review create`` gets all its items at once; an online rule's queue grows by batch).

Each item goes at the queue's end; the queue's key on ``(run, sample)`` makes adding one twice
(a batch sent again after a restart) a no-op, and two servers adding at once never take one
place: the one that loses the race for a place takes the next.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from aieval.errors import StoreError
from aieval.store._connection import Connection

__all__ = ["OnlineReviewTable"]

#: tries for a place when other writers keep taking the next one
_TRIES = 20


class OnlineReviewTable(Connection):
    """Adding items to a :class:`~aieval.store.Store`'s review queues."""

    def append_review_items(
        self, queue_id: str, run_id: str, items: Sequence[tuple[str, str]]
    ) -> int:
        """Add ``items`` (``(sample_id, stratum)``, samples of ``run_id``) at the end of the
        queue ``queue_id`` (equal weights), and ``run_id`` to its runs; answer how many were
        new."""
        added = 0
        for sample_id, stratum in items:
            added += self._append_one(queue_id, run_id, sample_id, stratum)
        row = self._read_one("SELECT runs FROM review_queues WHERE id = ?", (queue_id,))
        if row is not None and run_id not in (runs := list(json.loads(row[0]))):
            # a lost update here only leaves a run out of the queue's list (its items stay)
            self._write(
                "UPDATE review_queues SET runs = ? WHERE id = ?",
                (json.dumps([*runs, run_id]), queue_id),
            )
        return added

    def _append_one(self, queue_id: str, run_id: str, sample_id: str, stratum: str) -> bool:
        sql = (
            "INSERT INTO review_items (queue_id, ord, run_id, sample_id, stratum, weight)"
            " SELECT ?, COALESCE(MAX(ord), -1) + 1, ?, ?, ?, NULL FROM review_items"
            " WHERE queue_id = ?"
            " ON CONFLICT (queue_id, run_id, sample_id) DO NOTHING RETURNING ord"
        )
        args = (queue_id, run_id, sample_id, stratum, queue_id)
        for _ in range(_TRIES):
            with self._lock:
                try:
                    with self._db.transaction(exclusive=True):
                        return self._db.one(sql, args) is not None
                except self._db.errors as exc:
                    if not _place_taken(exc):
                        raise self._failed(exc) from exc
        raise StoreError(
            f"cannot add sample {sample_id!r} to review queue {queue_id!r} of the store at"
            f" {self.location}: other writers took every place tried ({_TRIES})"
        )


def _place_taken(exc: BaseException) -> bool:
    """Whether another writer took the place (the queue's ``ord`` key), so the next is free."""
    if getattr(exc, "sqlstate", None) == "23505":  # PostgreSQL's unique_violation
        return True
    return isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc)
