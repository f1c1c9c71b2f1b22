"""Review queues and reviewers' labels: the store's half of the human review of a judge.

A queue holds items (a run's sample each, in serving order, with why it was chosen). Each item
has ``reviewers`` slots; a reviewer takes one by inserting its row, and the table's keys (one
row per slot, one per reviewer of an item) make that atomic on both backends without a lock:
two reviewers racing for a slot cannot both insert it, and a reviewer cannot hold two slots of
one item. A reservation that expired (its reviewer left) is taken over by a conditional update
that only one taker wins. A label marks its slot done and is stored under a key of judge,
sample and reviewer, so one reviewer never labels a sample twice, however the saves race.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aieval.core import JudgeKey, ReviewLabel
from aieval.errors import ReviewError
from aieval.store._connection import Connection
from aieval.store._encoding import dumps, loads

__all__ = [
    "HOLD_S",
    "NewReviewQueue",
    "ReviewItem",
    "ReviewQueue",
    "ReviewTable",
    "ReviewWeight",
]

#: How long a reservation holds an item for its reviewer (seconds) before another may take it.
HOLD_S = 900.0
#: Items tried per request for a free slot (a reviewer racing others moves past taken ones).
_CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One item of a queue: a run's sample, its place, its stratum and its design weight
    (``None``: a queue stored before weights, whose items count equally)."""

    queue_id: str
    ord: int
    run_id: str
    sample_id: str
    stratum: str
    weight: float | None = None


@dataclass(frozen=True, slots=True)
class ReviewWeight:
    """How a queue drew one sample: its stratum and design weight (how many judged samples it
    stands for; ``None``: equal weights). Agreement figures from a queue's labels weight each
    label by it (:func:`aieval.stats.weighted_agreement`)."""

    stratum: str
    weight: float | None


@dataclass(frozen=True, slots=True)
class NewReviewQueue:
    """A queue before it is stored (:meth:`ReviewTable.create_review_queue`)."""

    name: str
    judge: JudgeKey
    runs: tuple[str, ...]
    #: ``(run_id, sample_id, stratum)`` or ``(run_id, sample_id, stratum, weight)`` in serving
    #: order
    items: tuple[tuple[str, str, str] | tuple[str, str, str, float], ...]
    selection: Mapping[str, Any] = field(default_factory=dict)
    reviewers: int = 2
    created_by: str | None = None


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    """A stored queue with its progress.

    Attributes:
        items: how many items it holds.
        complete: items labelled by ``reviewers`` reviewers.
        labels: labels saved in it.
        by_reviewer: labels saved in it per reviewer.
    """

    id: str
    name: str
    judge: JudgeKey
    runs: tuple[str, ...]
    selection: dict[str, Any]
    reviewers: int
    created_by: str | None
    created_at: float
    items: int = 0
    complete: int = 0
    labels: int = 0
    by_reviewer: dict[str, int] = field(default_factory=dict)


class ReviewTable(Connection):
    """The review tables of a :class:`~aieval.store.Store`."""

    def create_review_queue(self, queue: NewReviewQueue) -> str:
        """Store ``queue`` and its items; return its id."""
        if queue.reviewers < 1:
            raise ReviewError(f"queue {queue.name!r}: reviewers per item must be at least 1")
        if not queue.items:
            raise ReviewError(f"queue {queue.name!r} has no items: the runs hold no judged sample")
        queue_id = uuid.uuid4().hex[:12]
        head = (
            queue_id,
            queue.name,
            queue.judge.digest,
            queue.judge.scorer,
            dumps([list(pair) for pair in queue.judge.identity]),
            dumps(list(queue.runs)),
            dumps(dict(queue.selection)),
            queue.reviewers,
            queue.created_by,
            time.time(),
        )
        rows = [
            (queue_id, i, *item[:3], item[3] if len(item) > 3 else None)
            for i, item in enumerate(queue.items)
        ]
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    self._db.execute(
                        "INSERT INTO review_queues (id, name, judge, scorer, identity, runs,"
                        " selection, reviewers, created_by, created_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        head,
                    )
                    self._db.executemany(
                        "INSERT INTO review_items"
                        " (queue_id, ord, run_id, sample_id, stratum, weight)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        rows,
                    )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        return queue_id

    def review_queues(self) -> list[ReviewQueue]:
        """Every queue with its progress, newest first."""
        rows = self._read(
            "SELECT id, name, judge, scorer, identity, runs, selection, reviewers, created_by,"
            " created_at FROM review_queues ORDER BY created_at DESC, id"
        )
        return [self._with_progress(row) for row in rows]

    def review_queue(self, ref: str) -> ReviewQueue:
        """The queue whose id (or, failing that, newest of that name) is ``ref``.

        Raises:
            ReviewError: no such queue.
        """
        row = self._read_one(
            "SELECT id, name, judge, scorer, identity, runs, selection, reviewers, created_by,"
            " created_at FROM review_queues WHERE id = ? OR name = ?"
            " ORDER BY CASE WHEN id = ? THEN 0 ELSE 1 END, created_at DESC LIMIT 1",
            (ref, ref, ref),
        )
        if row is None:
            raise ReviewError(f"no review queue {ref!r}: `aieval review status` lists them")
        return self._with_progress(row)

    def _with_progress(self, row: tuple[Any, ...]) -> ReviewQueue:
        queue_id = row[0]
        (items,) = self._read_one(
            "SELECT count(*) FROM review_items WHERE queue_id = ?", (queue_id,)
        ) or (0,)
        # a label on an item (same judge, run and sample) counts for the queue whichever door
        # it came by: saved here, in another queue of the judge, or imported
        by = self._read(
            f"SELECT l.reviewer, count(*) FROM {_ITEM_LABELS} GROUP BY l.reviewer"
            " ORDER BY l.reviewer",
            (row[2], queue_id),
        )
        (complete,) = self._read_one(
            f"SELECT count(*) FROM (SELECT i.ord FROM {_ITEM_LABELS} GROUP BY i.ord"
            " HAVING count(*) >= ?) AS c",
            (row[2], queue_id, row[7]),
        ) or (0,)
        judge = JudgeKey(scorer=row[3], identity=tuple((k, v) for k, v in loads(row[4])))
        by_reviewer = {str(name): int(n) for name, n in by}
        return ReviewQueue(
            id=queue_id,
            name=row[1],
            judge=judge,
            runs=tuple(loads(row[5])),
            selection=loads(row[6]),
            reviewers=int(row[7]),
            created_by=row[8],
            created_at=float(row[9]),
            items=int(items),
            complete=int(complete),
            labels=sum(by_reviewer.values()),
            by_reviewer=by_reviewer,
        )

    def review_items(self, queue_id: str) -> list[ReviewItem]:
        """A queue's items in serving order."""
        rows = self._read(
            "SELECT queue_id, ord, run_id, sample_id, stratum, weight FROM review_items"
            " WHERE queue_id = ? ORDER BY ord",
            (queue_id,),
        )
        return [_item(r) for r in rows]

    def review_weights(self, queue: str) -> dict[tuple[str, str], ReviewWeight]:
        """How the queue ``queue`` (id or name) drew each of its items, by ``(run_id,
        sample_id)``: every item, labelled or not, so the strata's sizes can be summed
        (:func:`aieval.stats.stratum_sizes`).

        Raises:
            ReviewError: no such queue.
        """
        return {
            (item.run_id, item.sample_id): ReviewWeight(item.stratum, item.weight)
            for item in self.review_items(self.review_queue(queue).id)
        }

    def judge_designs(
        self, judge: str
    ) -> list[tuple[ReviewQueue, dict[tuple[str, str], ReviewWeight]]]:
        """Every queue of the judge with digest ``judge`` (newest first), each with how it drew
        its items (:meth:`review_weights`): the design its labels are weighted by."""
        queues = [q for q in self.review_queues() if q.judge.digest == judge]
        return [(q, self.review_weights(q.id)) for q in queues]

    def review_item(self, queue_id: str, ord: int) -> ReviewItem:
        """One item of a queue.

        Raises:
            ReviewError: the queue has no such item.
        """
        row = self._read_one(
            "SELECT queue_id, ord, run_id, sample_id, stratum, weight FROM review_items"
            " WHERE queue_id = ? AND ord = ?",
            (queue_id, ord),
        )
        if row is None:
            raise ReviewError(f"review queue {queue_id!r} has no item {ord}")
        return _item(row)

    def reserve_review_item(
        self,
        queue_id: str,
        reviewer: str,
        *,
        hold_s: float = HOLD_S,
        now: float | None = None,
        skip: Sequence[int] = (),
    ) -> ReviewItem | None:
        """Reserve the next item of ``queue_id`` for ``reviewer`` (for ``hold_s`` seconds), or
        the one it already holds (held again from now); ``None`` when nothing is left for it:
        every item is labelled by it or held by enough others. Items at the places ``skip``
        (the reviewer skipped them) are not served."""
        queue = self.review_queue(queue_id)
        skipped = set(skip)
        now = time.time() if now is None else now
        until = now + hold_s
        held = self._take(
            "UPDATE review_slots SET expires_at = ? WHERE queue_id = ? AND reviewer = ?"
            " AND done = 0 RETURNING ord",
            (until, queue.id, reviewer),
        )
        if held is not None:
            return self.review_item(queue.id, held)
        while True:
            # items this reviewer has not touched (nor labelled for this judge elsewhere: in
            # another queue, or imported), with a slot free or expired
            candidates = self._read(
                f"SELECT i.ord, ({_OUTSIDE}) FROM review_items i WHERE i.queue_id = ?"
                " AND NOT EXISTS (SELECT 1 FROM review_slots r WHERE r.queue_id = i.queue_id"
                " AND r.ord = i.ord AND r.reviewer = ?)"
                " AND NOT EXISTS (SELECT 1 FROM review_labels l WHERE l.judge = ?"
                " AND l.run_id = i.run_id AND l.sample_id = i.sample_id AND l.reviewer = ?)"
                " AND (SELECT count(*) FROM review_slots r WHERE r.queue_id = i.queue_id"
                " AND r.ord = i.ord AND (r.done = 1 OR r.expires_at > ?))"
                f" + ({_OUTSIDE}) < ?"
                " ORDER BY i.ord LIMIT ?",
                (
                    queue.judge.digest,
                    queue.id,
                    reviewer,
                    queue.judge.digest,
                    reviewer,
                    now,
                    queue.judge.digest,
                    queue.reviewers,
                    _CANDIDATES + len(skipped),
                ),
            )
            candidates = [row for row in candidates if int(row[0]) not in skipped]
            if not candidates:
                return None
            for ord, outside in candidates:
                # labels that came by another door fill slots of the item: fewer are left
                slots = queue.reviewers - int(outside)
                if self._take_slot(queue.id, int(ord), slots, reviewer, now, until):
                    return self.review_item(queue.id, int(ord))
            # every candidate was taken meanwhile by others: look again

    def _take_slot(
        self, queue_id: str, ord: int, slots: int, reviewer: str, now: float, until: float
    ) -> bool:
        """Take a free slot of one item, or an expired one; ``False`` when none was won."""
        for slot in range(1, slots + 1):
            won = self._take(
                "INSERT INTO review_slots (queue_id, ord, slot, reviewer, expires_at, done)"
                " VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING RETURNING ord",
                (queue_id, ord, slot, reviewer, until),
            )
            if won is not None:
                return True
            won = self._take(
                "UPDATE review_slots SET reviewer = ?, expires_at = ? WHERE queue_id = ?"
                " AND ord = ? AND slot = ? AND done = 0 AND expires_at <= ?"
                " AND NOT EXISTS (SELECT 1 FROM review_slots o WHERE o.queue_id = ?"
                " AND o.ord = ? AND o.reviewer = ?) RETURNING ord",
                (reviewer, until, queue_id, ord, slot, now, queue_id, ord, reviewer),
            )
            if won is not None:
                return True
        return False

    def _take(self, sql: str, args: Sequence[Any]) -> int | None:
        """Run one conditional write returning the ``ord`` it took, if any."""
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    row = self._db.one(sql, args)
            except self._db.errors as exc:
                if self._unique(exc):
                    return None
                raise self._failed(exc) from exc
        return None if row is None else int(row[0])

    def _unique(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a key the write would have doubled (another took it first)."""
        if getattr(exc, "sqlstate", None) == "23505":  # PostgreSQL's unique_violation
            return True
        return isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc)

    def release_review_item(self, queue_id: str, ord: int, reviewer: str) -> bool:
        """Give back ``reviewer``'s reservation of an item it has not labelled; whether it
        held one."""
        return (
            self._take(
                "DELETE FROM review_slots WHERE queue_id = ? AND ord = ? AND reviewer = ?"
                " AND done = 0 RETURNING ord",
                (queue_id, ord, reviewer),
            )
            is not None
        )

    def save_review_label(self, queue_id: str, ord: int, label: ReviewLabel) -> None:
        """Store ``label`` for the item ``ord`` of ``queue_id``, which its reviewer must hold.

        Raises:
            ReviewError: the reviewer does not hold the item (it was released, or expired and
                taken by another), or labelled it already.
        """
        item = self.review_item(queue_id, ord)
        if (item.run_id, item.sample_id) != (label.run_id, label.sample_id):
            raise ReviewError(f"item {ord} of queue {queue_id!r} is not sample {label.sample_id!r}")
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    held = self._db.one(
                        "UPDATE review_slots SET done = 1 WHERE queue_id = ? AND ord = ?"
                        " AND reviewer = ? AND done = 0 RETURNING slot",
                        (queue_id, ord, label.reviewer),
                    )
                    if held is None:
                        raise ReviewError(
                            f"reviewer {label.reviewer!r} does not hold item {ord} of queue"
                            f" {queue_id!r} (released, taken by another after it expired, or"
                            " labelled already): ask for the next item"
                        )
                    self._db.execute(_INSERT_LABEL, _label_row(label, queue_id))
            except self._db.errors as exc:
                if self._unique(exc):
                    raise ReviewError(
                        f"reviewer {label.reviewer!r} labelled sample {label.sample_id!r} of"
                        f" run {label.run_id!r} already"
                    ) from exc
                raise self._failed(exc) from exc

    def add_review_labels(self, labels: Iterable[ReviewLabel]) -> int:
        """Store imported labels; one already stored (same judge, sample and reviewer) is left
        as it is, so importing a file twice changes nothing. Returns how many were new."""
        rows = [_label_row(label, None) for label in labels]
        if not rows:
            return 0
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    (before,) = self._db.one("SELECT count(*) FROM review_labels") or (0,)
                    self._db.executemany(_INSERT_LABEL + " ON CONFLICT DO NOTHING", rows)
                    (after,) = self._db.one("SELECT count(*) FROM review_labels") or (0,)
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        return int(after) - int(before)

    def review_labels(
        self,
        judge: str | None = None,
        *,
        since: float | None = None,
        queue: str | None = None,
        reviewer: str | None = None,
    ) -> list[ReviewLabel]:
        """Stored labels (of the judge with digest ``judge``, saved at or after ``since``, on
        the items of ``queue`` (saved there, in another queue of its judge, or imported), by
        ``reviewer``), oldest first."""
        where: list[str] = []
        args: list[Any] = []
        for column, value in (("judge", judge), ("reviewer", reviewer)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if queue is not None:
            # the labels on the queue's items, whichever door they came by
            where.append(
                "EXISTS (SELECT 1 FROM review_items i JOIN review_queues q ON q.id = i.queue_id"
                " WHERE i.queue_id = ? AND q.judge = review_labels.judge"
                " AND i.run_id = review_labels.run_id AND i.sample_id = review_labels.sample_id)"
            )
            args.append(queue)
        if since is not None:
            where.append("labelled_at >= ?")
            args.append(since)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._read(
            "SELECT judge, run_id, sample_id, reviewer, passed, score, note, labelled_at"
            f" FROM review_labels{clause} ORDER BY labelled_at, run_id, sample_id, reviewer",
            args,
        )
        return [
            ReviewLabel(
                judge=r[0],
                run_id=r[1],
                sample_id=r[2],
                reviewer=r[3],
                passed=None if r[4] is None else bool(r[4]),
                score=r[5],
                note=r[6],
                labelled_at=float(r[7]),
            )
            for r in rows
        ]

    def reviewer_labelled(self, queue_id: str, ord: int, reviewer: str) -> bool:
        """Whether ``reviewer`` saved a label for item ``ord`` of ``queue_id``."""
        row = self._read_one(
            "SELECT 1 FROM review_slots WHERE queue_id = ? AND ord = ? AND reviewer = ?"
            " AND done = 1",
            (queue_id, ord, reviewer),
        )
        return row is not None

    def missing_samples(self, keys: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """Of ``(run_id, sample_id)`` pairs, those the store does not hold."""
        missing = []
        for run_id, sample_id in dict.fromkeys(keys):
            row = self._read_one(
                "SELECT 1 FROM samples WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
            )
            if row is None:
                missing.append((run_id, sample_id))
        return missing


#: The labels on a queue's items (args: the judge's digest, the queue's id), whichever door
#: they came by, as ``i`` (the item) joined with ``l`` (the label).
_ITEM_LABELS = (
    "review_items i JOIN review_labels l ON l.judge = ? AND l.run_id = i.run_id"
    " AND l.sample_id = i.sample_id WHERE i.queue_id = ?"
)

#: How many labels of the item ``i`` came by another door than the item's own slots (arg: the
#: judge's digest): they fill slots as a label saved here does.
_OUTSIDE = (
    "SELECT count(*) FROM review_labels o WHERE o.judge = ? AND o.run_id = i.run_id"
    " AND o.sample_id = i.sample_id AND NOT EXISTS (SELECT 1 FROM review_slots d"
    " WHERE d.queue_id = i.queue_id AND d.ord = i.ord AND d.reviewer = o.reviewer AND d.done = 1)"
)

_INSERT_LABEL = (
    "INSERT INTO review_labels (judge, run_id, sample_id, reviewer, passed, score, note,"
    " labelled_at, queue_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _label_row(label: ReviewLabel, queue_id: str | None) -> tuple[Any, ...]:
    passed = None if label.passed is None else int(label.passed)
    return (
        label.judge,
        label.run_id,
        label.sample_id,
        label.reviewer,
        passed,
        label.score,
        label.note,
        label.labelled_at or time.time(),
        queue_id,
    )


def _item(row: Sequence[Any]) -> ReviewItem:
    """A ``review_items`` row as an item (``weight`` NULL: equal weights)."""
    weight = None if row[5] is None else float(row[5])
    return ReviewItem(row[0], int(row[1]), row[2], row[3], row[4], weight)
