"""The store's half of online alerts: a rule's windows (``online_windows``) as the alert check
reads them, and its incidents (``online_alerts``), each opened once and delivered once.

An incident's row is inserted ``ON CONFLICT DO NOTHING``: a second server, or the same one after
a restart, finds it there and does not open it again. Delivering one takes a lease first (a
conditional update that only one sender wins, on both backends), so two senders never POST the
same incident at once; a sender killed mid-delivery loses nothing: its lease expires and the
incident is delivered on a later cycle. A failed POST sets when the incident may be tried next
(``next_attempt_at``); one retried for the whole schedule is marked ``abandoned_at``, never
dropped: it stays listed, undelivered, with its last error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aieval.store._connection import Connection

__all__ = ["OnlineAlertTable", "StoredAlert", "WindowRow"]


@dataclass(frozen=True, slots=True)
class WindowRow:
    """One window of a rule as stored: its span (epoch seconds, UTC), its run, whether closed."""

    rule: str
    start: float
    end: float
    run_id: str
    closed: bool


@dataclass(frozen=True, slots=True)
class StoredAlert:
    """One incident of a rule: what its webhook is sent, and how delivery went."""

    rule: str
    incident: str
    kind: str
    opened_at: float
    payload: dict[str, Any]
    delivered_at: float | None
    attempts: int
    last_error: str | None
    #: after a failed POST, not tried again before this time
    next_attempt_at: float | None = None
    #: when delivery was given up (the retry schedule ended); ``None`` while it goes on
    abandoned_at: float | None = None


_ALERT_COLUMNS = "rule, incident, kind, opened_at, payload, delivered_at, attempts, last_error"
_READ_COLUMNS = f"{_ALERT_COLUMNS}, next_attempt_at, abandoned_at"


class OnlineAlertTable(Connection):
    """The online windows and alerts of a :class:`~aieval.store.Store`."""

    def online_windows(
        self, rule: str, since: float | None = None, until: float | None = None
    ) -> list[WindowRow]:
        """``rule``'s windows starting in ``[since, until)`` (unbounded when ``None``), oldest
        first."""
        where: list[str] = ["rule = ?"]
        args: list[Any] = [rule]
        if since is not None:
            where.append("window_start >= ?")
            args.append(since)
        if until is not None:
            where.append("window_start < ?")
            args.append(until)
        rows = self._read(
            "SELECT rule, window_start, window_end, run_id, closed FROM online_windows"
            f" WHERE {' AND '.join(where)} ORDER BY window_start",
            args,
        )
        return [WindowRow(str(r), float(s), float(e), str(i), bool(c)) for r, s, e, i, c in rows]

    def open_alert(
        self, rule: str, incident: str, kind: str, payload: dict[str, Any], opened_at: float
    ) -> bool:
        """Store an incident unless it is stored already; ``True`` when this call opened it."""
        sql = (
            f"INSERT INTO online_alerts ({_ALERT_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, NULL, 0, NULL) ON CONFLICT DO NOTHING RETURNING incident"
        )
        args = (rule, incident, kind, opened_at, json.dumps(payload, sort_keys=True))
        return self._one_write(sql, args) is not None

    def online_alerts(
        self, rule: str | None = None, *, undelivered: bool = False
    ) -> list[StoredAlert]:
        """The incidents of ``rule`` (every rule when ``None``), oldest first; ``undelivered``:
        only those not delivered yet."""
        where = ["1 = 1"]
        args: list[Any] = []
        if rule is not None:
            where.append("rule = ?")
            args.append(rule)
        if undelivered:
            where.append("delivered_at IS NULL")
        rows = self._read(
            f"SELECT {_READ_COLUMNS} FROM online_alerts WHERE {' AND '.join(where)}"
            " ORDER BY opened_at, rule, incident",
            args,
        )
        return [_alert(row) for row in rows]

    def lease_alert(self, rule: str, incident: str, now: float, until: float) -> bool:
        """Take the right to deliver an undelivered incident until ``until`` (counting one
        attempt); ``False`` when it is delivered or abandoned, not due yet (its
        ``next_attempt_at`` is after ``now``), or another sender holds an unexpired lease."""
        sql = (
            "UPDATE online_alerts SET attempts = attempts + 1, lease_until = ?"
            " WHERE rule = ? AND incident = ? AND delivered_at IS NULL AND abandoned_at IS NULL"
            " AND (next_attempt_at IS NULL OR next_attempt_at <= ?)"
            " AND (lease_until IS NULL OR lease_until <= ?) RETURNING incident"
        )
        return self._one_write(sql, (until, rule, incident, now, now)) is not None

    def finish_alert(
        self,
        rule: str,
        incident: str,
        *,
        delivered_at: float | None,
        error: str | None,
        next_attempt_at: float | None = None,
        abandoned_at: float | None = None,
    ) -> None:
        """Record an attempt's outcome and give its lease up: delivered at ``delivered_at``, or
        not (``None``) with ``error``, to be tried again at ``next_attempt_at`` or given up at
        ``abandoned_at``."""
        self._write(
            "UPDATE online_alerts SET delivered_at = ?, last_error = ?, lease_until = NULL,"
            " next_attempt_at = ?, abandoned_at = ?"
            " WHERE rule = ? AND incident = ? AND delivered_at IS NULL",
            (delivered_at, error, next_attempt_at, abandoned_at, rule, incident),
        )

    def _one_write(self, sql: str, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Run one write returning a row (the row it wrote, if any) in its own transaction."""
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    return self._db.one(sql, args)
            except self._db.errors as exc:
                raise self._failed(exc) from exc


def _alert(row: tuple[Any, ...]) -> StoredAlert:
    rule, incident, kind, opened, payload, delivered, attempts, error, due, abandoned = row
    return StoredAlert(
        rule=str(rule),
        incident=str(incident),
        kind=str(kind),
        opened_at=float(opened),
        payload=json.loads(payload),
        delivered_at=None if delivered is None else float(delivered),
        attempts=int(attempts),
        last_error=None if error is None else str(error),
        next_attempt_at=None if due is None else float(due),
        abandoned_at=None if abandoned is None else float(abandoned),
    )
