"""Online scoring's work queue in the store: which received traces were examined, each matched
trace's work row of a rule (pending, claimed under a lease, then scored or skipped with one
reason), the window runs holding the scored samples, and backfills' cursors.

Every change of a work row is one conditional statement (or one transaction), so any number of
servers sharing the store take each row exactly once: a claim takes pending rows (and claimed
rows whose lease expired: a killed server loses nothing) with ``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, under SQLite's write lock on SQLite; finishing or releasing a row needs the claim
still held (the same worker and claim number), so a server whose lease ran out and was taken
over cannot finish it twice (docs/online.md, "Exactly once, on one server or many")."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from aieval.errors import StoreError
from aieval.store._connection import Connection, placeholders

__all__ = [
    "OnlineBackfill",
    "OnlineWindow",
    "OnlineWork",
    "OnlineWorkTable",
    "SettledTrace",
    "WorkItem",
    "window_run_id",
]

T = TypeVar("T")

_WORK_COLUMNS = (
    "rule, trace_id, window_start, state, reason, message, claimed_by, claimed_until,"
    " not_before, attempts, matched_at, finished_at, run_id"
)
#: The states a work row ends in.
_FINAL = ("scored", "skipped")
#: Request ids read again on PostgreSQL at each take-in (see ``take_in_received``).
ID_OVERLAP = 1000
#: The last request id of the next ``limit`` trace rows after a request id (index-driven).
TAKE_IN_BOUND = (
    "SELECT MAX(request_id) FROM (SELECT request_id FROM received_traces WHERE request_id > ?"
    " ORDER BY request_id LIMIT ?) AS next_rows"
)
#: The traces of the requests in ``(after, upto]``, each with all its requests counted:
#: first and last arrival, newest request id, how many.
TAKE_IN_TRACES = (
    "SELECT t.trace_id, MIN(r.received), MAX(r.received), MAX(r.id), COUNT(*)"
    " FROM received_traces t JOIN received_requests r ON r.id = t.request_id"
    " WHERE t.trace_id IN (SELECT n.trace_id FROM received_traces n"
    " WHERE n.request_id > ? AND n.request_id <= ?) GROUP BY t.trace_id ORDER BY t.trace_id"
)


@dataclass(frozen=True, slots=True)
class WorkItem:
    """A matched trace of one rule, to insert: ``pending``, or ``skipped`` with a reason
    (``sampled_out`` when sampling left it out)."""

    rule: str
    trace_id: str
    window_start: float
    state: str = "pending"
    reason: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class OnlineWork:
    """One work row as stored. ``attempts`` numbers its claims: a claim is held by
    ``(claimed_by, attempts)``."""

    rule: str
    trace_id: str
    window_start: float
    state: str
    reason: str | None
    message: str | None
    claimed_by: str | None
    claimed_until: float | None
    not_before: float
    attempts: int
    matched_at: float
    finished_at: float | None
    run_id: str | None

    @classmethod
    def of(cls, row: Sequence[Any]) -> OnlineWork:
        """The row read as :data:`_WORK_COLUMNS`."""
        return cls(
            str(row[0]),
            str(row[1]),
            float(row[2]),
            str(row[3]),
            row[4],
            row[5],
            row[6],
            None if row[7] is None else float(row[7]),
            float(row[8]),
            int(row[9]),
            float(row[10]),
            None if row[11] is None else float(row[11]),
            row[12],
        )


@dataclass(frozen=True, slots=True)
class OnlineWindow:
    """A rule's window and the stored run holding its samples."""

    rule: str
    window_start: float
    window_end: float
    run_id: str
    closed: bool


@dataclass(frozen=True, slots=True)
class SettledTrace:
    """A received trace: its id, when its first and last export requests arrived, and how
    many of its requests were taken in (0 when not counted)."""

    trace_id: str
    first_received: float
    last_received: float
    requests: int = 0


@dataclass(frozen=True, slots=True)
class OnlineBackfill:
    """A backfill of ``rule`` over traces received in ``[since, until)``: ``cursor`` is the
    last trace id it enqueued (resumed after it), ``done_at`` set once it went through all."""

    rule: str
    since: float
    until: float
    cursor: str
    done_at: float | None


def window_run_id(rule: str, window_start: float) -> str:
    """The run id of ``rule``'s window starting at ``window_start``: the same on every server
    (``YYYYMMDD-HHMMSS`` of the window's start, then 8 hex digits of a digest of both), so
    two servers creating it at once create one run."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(window_start))
    digest = hashlib.blake2b(f"{rule}\0{window_start!r}".encode(), digest_size=4).hexdigest()
    return f"{stamp}-{digest}"


class OnlineWorkTable(Connection):
    """The online work queue (``online_traces``, ``online_work``, ``online_windows``,
    ``online_backfills``): see the module's docstring."""

    def _atomic(self, action: Callable[[], T]) -> T:
        """Run ``action`` (statements on ``self._db``) in one transaction holding SQLite's
        write lock (PostgreSQL: the rows it locks); a failure is a :class:`StoreError`."""
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    return action()
            except self._db.errors as exc:
                raise self._failed(exc) from exc

    def _insert_items(self, items: Sequence[WorkItem], now: float) -> int:
        """Insert ``items`` in the open transaction, each unless its row exists; how many."""
        added = 0
        for item in items:
            final = item.state in _FINAL
            row = self._db.one(
                f"INSERT INTO online_work ({_WORK_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, 0, 0, ?, ?, NULL)"
                " ON CONFLICT DO NOTHING RETURNING rule",
                (
                    item.rule,
                    item.trace_id,
                    item.window_start,
                    item.state,
                    item.reason,
                    item.message,
                    now,
                    now if final else None,
                ),
            )
            added += row is not None
        return added

    def take_in_received(self, limit: int) -> int:
        """Take the traces of the received requests not taken in yet into ``online_traces``
        (new ones, and those with requests arrived since: to be examined again from their
        last arrival on), ``limit`` trace rows per transaction; how many traces changed.

        Found by the requests' ids after the newest taken in (both read by an index: a cycle
        never reads every stored trace). On PostgreSQL, ids are drawn before their request
        commits, so the last :data:`ID_OVERLAP` ids are read again: a request committed late
        is still taken in (a trace counts its requests, so one seen again changes nothing)."""
        top = self._read_one("SELECT MAX(last_request) FROM online_traces")
        after = int(top[0] or 0) if top else 0
        if self._db.for_update:
            after = max(0, after - ID_OVERLAP)
        changed = 0
        while True:
            bound = self._read_one(TAKE_IN_BOUND, (after, limit))
            if bound is None or bound[0] is None:
                return changed
            upto = int(bound[0])
            changed += self._atomic(partial(self._take_in, after, upto))
            after = upto

    def _take_in(self, after: int, upto: int) -> int:
        """Take in the traces of requests ``after < id <= upto`` (in the open transaction)."""
        rows = self._db.query(TAKE_IN_TRACES, (after, upto))
        changed = 0
        for trace_id, first, last, request, requests in rows:
            row = self._db.one(
                "INSERT INTO online_traces (trace_id, examined_at, first_received,"
                " last_received, last_request, requests, recheck_at)"
                " VALUES (?, 0, ?, ?, ?, ?, ?) ON CONFLICT (trace_id) DO UPDATE SET"
                " first_received = excluded.first_received,"
                " last_received = excluded.last_received, last_request = excluded.last_request,"
                " requests = excluded.requests, recheck_at = excluded.recheck_at"
                " WHERE online_traces.requests < excluded.requests RETURNING trace_id",
                (trace_id, first, last, request, requests, last),
            )
            changed += row is not None
        return changed

    def traces_to_examine(self, now: float, lease_s: float, limit: int) -> list[SettledTrace]:
        """Take up to ``limit`` traces due for examination by ``now`` (their ``recheck_at``
        passed), holding them for ``lease_s`` (another server passes them over meanwhile; a
        server killed mid-examination loses nothing), the longest due first."""
        skip = " FOR UPDATE SKIP LOCKED" if self._db.for_update else ""
        sql = (
            "UPDATE online_traces SET recheck_at = ? WHERE trace_id IN (SELECT trace_id FROM"
            f" online_traces WHERE recheck_at <= ? ORDER BY recheck_at LIMIT ?{skip})"
            " RETURNING trace_id, first_received, last_received, requests"
        )
        rows = self._atomic(lambda: self._db.query(sql, (now + lease_s, now, limit)))
        found = [SettledTrace(str(t), float(a), float(b), int(n)) for t, a, b, n in rows]
        return sorted(found, key=lambda t: (t.last_received, t.trace_id))

    def record_examination(
        self, trace: SettledTrace, items: Sequence[WorkItem], recheck_at: float | None, now: float
    ) -> int:
        """Record ``trace``'s examination in one transaction: its work ``items`` (each unless
        its rule has the trace already: a rule that matched keeps its row), and when it is to
        be examined next (``None``: not before more of its spans arrive). When more of its
        requests arrived meanwhile, it stays due (examined again). How many rows were new."""

        def write() -> int:
            added = self._insert_items(items, now)
            self._db.one(
                "UPDATE online_traces SET examined_at = ?, recheck_at = ? WHERE trace_id = ?"
                " AND requests = ? RETURNING trace_id",
                (now, recheck_at, trace.trace_id, trace.requests),
            )
            return added

        return self._atomic(write)

    def unexamined_traces(self, now: float) -> tuple[int, float | None]:
        """How many received traces wait for examination by ``now``, and since when the longest
        has waited (``None``: none): taken-in traces due and not examined yet (since they were
        due), and the traces of requests no cycle has taken in yet (since they arrived: none
        are when no server is scoring). Both read by index, never by a scan of every trace."""
        row = self._read_one(
            "SELECT COUNT(*), MIN(recheck_at) FROM online_traces WHERE recheck_at <= ?", (now,)
        )
        due, since = (int(row[0]), row[1]) if row is not None and row[0] else (0, None)
        top = self._read_one("SELECT MAX(last_request) FROM online_traces")
        after = int(top[0] or 0) if top else 0
        new = self._read_one(
            "SELECT COUNT(DISTINCT t.trace_id), MIN(r.received) FROM received_traces t"
            " JOIN received_requests r ON r.id = t.request_id WHERE t.request_id > ?"
            " AND NOT EXISTS (SELECT 1 FROM online_traces o WHERE o.trace_id = t.trace_id"
            " AND o.recheck_at <= ?)",
            (after, now),
        )
        if new is not None and new[0]:
            due += int(new[0])
            since = new[1] if since is None else min(float(since), float(new[1]))
        return due, None if since is None else float(since)

    def enqueue_online(self, items: Sequence[WorkItem], now: float | None = None) -> int:
        """Insert the work ``items`` (a backfill's), each unless its rule has the trace already
        (so enqueuing again changes nothing); how many were new."""
        at = time.time() if now is None else now
        return self._atomic(lambda: self._insert_items(items, at))

    def claim_online(
        self,
        worker: str,
        limit: int,
        lease_s: float,
        now: float,
        rules: Sequence[str] | None = None,
    ) -> list[OnlineWork]:
        """Claim up to ``limit`` rows for ``worker`` until ``now + lease_s``: pending rows due
        by ``now`` and claimed rows whose lease ran out, of ``rules`` (all when ``None``),
        oldest first. Each row is claimed by one worker only, on any number of servers."""
        if rules is not None and not rules:
            return []
        where = (
            "((state = 'pending' AND not_before <= ?)"
            " OR (state = 'claimed' AND claimed_until <= ?))"
        )
        args: list[Any] = [now, now]
        if rules is not None:
            where += f" AND rule IN ({placeholders(len(rules))})"
            args += list(rules)
        # PostgreSQL: rows another server is claiming are passed over, not waited for
        skip = " FOR UPDATE SKIP LOCKED" if self._db.for_update else ""
        sql = (
            "UPDATE online_work SET state = 'claimed', claimed_by = ?, claimed_until = ?,"
            " attempts = attempts + 1 WHERE (rule, trace_id) IN (SELECT rule, trace_id"
            f" FROM online_work WHERE {where} ORDER BY not_before, matched_at, trace_id"
            f" LIMIT ?{skip}) RETURNING {_WORK_COLUMNS}"
        )
        rows = self._atomic(lambda: self._db.query(sql, (worker, now + lease_s, *args, limit)))
        return sorted((OnlineWork.of(row) for row in rows), key=lambda w: w.matched_at)

    def renew_online(
        self, worker: str, claims: Sequence[OnlineWork], lease_s: float, now: float
    ) -> int:
        """Hold ``worker``'s ``claims`` until ``now + lease_s``; how many it still held."""
        held = 0
        for work in claims:
            held += self._held(
                "UPDATE online_work SET claimed_until = ?",
                (now + lease_s,),
                worker,
                work,
            )
        return held

    def finish_online(
        self,
        worker: str,
        work: OnlineWork,
        state: str,
        *,
        reason: str | None = None,
        message: str | None = None,
        run_id: str | None = None,
        now: float | None = None,
    ) -> bool:
        """End ``work`` as ``scored`` (its sample in ``run_id``) or ``skipped`` (with
        ``reason``), only while ``worker`` still holds that claim; whether it did."""
        if state not in _FINAL:
            raise StoreError(f"a work row ends scored or skipped, not {state!r}")
        if (state == "skipped") != (reason is not None):
            raise StoreError("a skipped work row has one reason, a scored one none")
        at = time.time() if now is None else now
        return bool(
            self._held(
                "UPDATE online_work SET state = ?, reason = ?, message = ?, run_id = ?,"
                " finished_at = ?, claimed_until = NULL",
                (state, reason, message, run_id, at),
                worker,
                work,
            )
        )

    def release_online(self, worker: str, work: OnlineWork, not_before: float) -> bool:
        """Give ``work`` back as pending, not claimed again before ``not_before`` (a trace
        waiting for its spans), only while ``worker`` holds it; whether it did."""
        return bool(
            self._held(
                "UPDATE online_work SET state = 'pending', not_before = ?, claimed_by = NULL,"
                " claimed_until = NULL",
                (not_before,),
                worker,
                work,
            )
        )

    def _held(self, update: str, args: Sequence[Any], worker: str, work: OnlineWork) -> int:
        """Run ``update`` on ``work``'s row if ``worker`` holds its claim; 1 if it did."""
        sql = (
            f"{update} WHERE rule = ? AND trace_id = ? AND state = 'claimed'"
            " AND claimed_by = ? AND attempts = ? RETURNING rule"
        )
        params = (*args, work.rule, work.trace_id, worker, work.attempts)
        return 0 if self._atomic(lambda: self._db.one(sql, params)) is None else 1

    def requeue_online(
        self, rule: str, since: float, until: float, reasons: Sequence[str], now: float
    ) -> int:
        """Put ``rule``'s rows skipped for one of ``reasons`` in windows starting in
        ``[since, until)`` back to pending (a backfill once the budget allows); how many."""
        if not reasons:
            return 0
        sql = (
            "UPDATE online_work SET state = 'pending', reason = NULL, message = NULL,"
            " not_before = ?, claimed_by = NULL, claimed_until = NULL, finished_at = NULL"
            " WHERE rule = ? AND state = 'skipped' AND window_start >= ? AND window_start < ?"
            f" AND reason IN ({placeholders(len(reasons))}) RETURNING trace_id"
        )
        rows = self._atomic(lambda: self._db.query(sql, (now, rule, since, until, *reasons)))
        return len(rows)

    def online_work(
        self, rule: str | None = None, trace_ids: Sequence[str] | None = None
    ) -> list[OnlineWork]:
        """The work rows (of ``rule``, of ``trace_ids``; all when ``None``)."""
        where, args = [], []
        if rule is not None:
            where.append("rule = ?")
            args.append(rule)
        if trace_ids is not None:
            if not trace_ids:
                return []
            where.append(f"trace_id IN ({placeholders(len(trace_ids))})")
            args += list(trace_ids)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._read(
            f"SELECT {_WORK_COLUMNS} FROM online_work{clause} ORDER BY rule, matched_at, trace_id",
            args,
        )
        return [OnlineWork.of(row) for row in rows]

    def received_between(
        self, since: float, until: float, after: str, limit: int
    ) -> list[SettledTrace]:
        """Up to ``limit`` received traces whose last request arrived in ``[since, until)``,
        by trace id, those after ``after`` (a backfill's cursor)."""
        rows = self._read(
            "SELECT t.trace_id, MIN(r.received), MAX(r.received) FROM received_traces t"
            " JOIN received_requests r ON r.id = t.request_id WHERE t.trace_id > ?"
            " GROUP BY t.trace_id HAVING MAX(r.received) >= ? AND MAX(r.received) < ?"
            " ORDER BY t.trace_id LIMIT ?",
            (after, since, until, limit),
        )
        return [SettledTrace(str(t), float(a), float(b)) for t, a, b in rows]

    def received_times(self, trace_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
        """When the first and the last request holding each of ``trace_ids`` arrived."""
        if not trace_ids:
            return {}
        rows = self._read(
            "SELECT t.trace_id, MIN(r.received), MAX(r.received) FROM received_traces t"
            " JOIN received_requests r ON r.id = t.request_id"
            f" WHERE t.trace_id IN ({placeholders(len(trace_ids))}) GROUP BY t.trace_id",
            list(trace_ids),
        )
        return {str(t): (float(a), float(b)) for t, a, b in rows}

    def last_received(self, trace_ids: Sequence[str]) -> dict[str, float]:
        """When the last request holding each of ``trace_ids`` arrived (absent: none)."""
        if not trace_ids:
            return {}
        rows = self._read(
            "SELECT t.trace_id, MAX(r.received) FROM received_traces t"
            " JOIN received_requests r ON r.id = t.request_id"
            f" WHERE t.trace_id IN ({placeholders(len(trace_ids))}) GROUP BY t.trace_id",
            list(trace_ids),
        )
        return {str(t): float(at) for t, at in rows}

    def online_sample_stored(self, run_id: str, sample_id: str) -> bool:
        """Whether the run ``run_id`` holds the sample ``sample_id``."""
        found = self._read_one(
            "SELECT 1 FROM samples WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
        )
        return found is not None

    def online_window_run(
        self,
        rule: str,
        window_start: float,
        window_end: float,
        create: str | None = None,
    ) -> OnlineWindow | None:
        """``rule``'s window starting at ``window_start``; when absent and ``create`` (the
        run's name) is given, created with its run (:func:`window_run_id`): one run per window
        even when several servers create it at once."""
        found = self._window(rule, window_start)
        if found is not None or create is None:
            if found is not None and create is not None:
                self._window_run(found.run_id, create)
            return found
        run_id = window_run_id(rule, window_start)
        self._write(
            "INSERT INTO online_windows (rule, window_start, window_end, run_id, closed)"
            " VALUES (?, ?, ?, ?, 0) ON CONFLICT DO NOTHING",
            (rule, window_start, window_end, run_id),
        )
        window = self._window(rule, window_start)
        if window is None:  # pragma: no cover - the row was just written
            raise StoreError(f"the window of rule {rule!r} at {window_start} was not stored")
        self._window_run(window.run_id, create)
        return window

    def _window_run(self, run_id: str, name: str) -> None:
        """Create the window's run unless it exists (a server may have died between the
        window's row and its run; two may create it at once: the key keeps one)."""
        if self._read_one("SELECT 1 FROM runs WHERE id = ?", (run_id,)) is not None:
            return
        try:
            self.create_run(name=name, run_id=run_id, config={"online": True})  # type: ignore[attr-defined]
        except StoreError:
            if self._read_one("SELECT 1 FROM runs WHERE id = ?", (run_id,)) is None:
                raise

    def _window(self, rule: str, window_start: float) -> OnlineWindow | None:
        row = self._read_one(
            "SELECT rule, window_start, window_end, run_id, closed FROM online_windows"
            " WHERE rule = ? AND window_start = ?",
            (rule, window_start),
        )
        if row is None:
            return None
        return OnlineWindow(str(row[0]), float(row[1]), float(row[2]), str(row[3]), bool(row[4]))

    def windows_to_close(self, now: float) -> list[OnlineWindow]:
        """The open windows that ended by ``now`` with no work pending or claimed."""
        rows = self._read(
            "SELECT w.rule, w.window_start, w.window_end, w.run_id, w.closed"
            " FROM online_windows w WHERE w.closed = 0 AND w.window_end <= ?"
            " AND NOT EXISTS (SELECT 1 FROM online_work o WHERE o.rule = w.rule"
            " AND o.window_start = w.window_start AND o.state IN ('pending', 'claimed'))"
            " ORDER BY w.window_start",
            (now,),
        )
        return [OnlineWindow(str(r), float(s), float(e), str(i), bool(c)) for r, s, e, i, c in rows]

    def open_online_windows(self) -> list[OnlineWindow]:
        """The windows not closed yet, oldest first."""
        rows = self._read(
            "SELECT rule, window_start, window_end, run_id, closed FROM online_windows"
            " WHERE closed = 0 ORDER BY window_start, rule"
        )
        return [OnlineWindow(str(r), float(s), float(e), str(i), bool(c)) for r, s, e, i, c in rows]

    def close_online_window(self, rule: str, window_start: float) -> bool:
        """Mark the window closed; whether this call closed it (one closer of many)."""
        row = self._atomic(
            lambda: self._db.one(
                "UPDATE online_windows SET closed = 1 WHERE rule = ? AND window_start = ?"
                " AND closed = 0 RETURNING rule",
                (rule, window_start),
            )
        )
        return row is not None

    def online_backfill(
        self, rule: str, since: float, until: float, now: float | None = None
    ) -> OnlineBackfill:
        """The backfill of ``rule`` over ``[since, until)``, recorded when new (so a second
        request resumes the first)."""
        at = time.time() if now is None else now
        self._write(
            "INSERT INTO online_backfills (rule, since, until, cursor, requested_at)"
            " VALUES (?, ?, ?, '', ?) ON CONFLICT DO NOTHING",
            (rule, since, until, at),
        )
        row = self._read_one(
            "SELECT cursor, done_at FROM online_backfills WHERE rule = ? AND since = ?"
            " AND until = ?",
            (rule, since, until),
        )
        if row is None:  # pragma: no cover - the row was just written
            raise StoreError(f"the backfill of rule {rule!r} was not stored")
        return OnlineBackfill(rule, since, until, str(row[0]), row[1])

    def advance_backfill(
        self, backfill: OnlineBackfill, cursor: str, *, done: bool = False, now: float | None = None
    ) -> None:
        """Record how far ``backfill`` enqueued (``cursor``), and whether it is ``done``."""
        at = time.time() if now is None else now
        self._write(
            "UPDATE online_backfills SET cursor = ?, done_at = ? WHERE rule = ? AND since = ?"
            " AND until = ?",
            (cursor, at if done else None, backfill.rule, backfill.since, backfill.until),
            idempotent=True,
        )

    def pending_backfills(self) -> list[OnlineBackfill]:
        """The backfills asked for and not done yet, oldest request first."""
        rows = self._read(
            "SELECT rule, since, until, cursor, done_at FROM online_backfills"
            " WHERE done_at IS NULL ORDER BY requested_at, rule"
        )
        return [OnlineBackfill(str(r), float(a), float(b), str(c), d) for r, a, b, c, d in rows]

    def online_rule_specs(self) -> list[tuple[str, str, bool]]:
        """Every stored rule: ``(name, spec JSON, paused)``, by name."""
        rows = self._read("SELECT name, spec, paused FROM online_rules ORDER BY name")
        return [(str(n), str(s), bool(p)) for n, s, p in rows]
