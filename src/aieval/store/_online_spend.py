"""An online rule's spend ledger (``online_spend``): calls reserved before they start, their
tokens and cost added when they end, per UTC hour and day, shared by every server on the store.

A reservation counts the call on both its hour and day rows at once, and only while every
limit of both is still below its figure: on SQLite under ``BEGIN IMMEDIATE`` (one writer), on
PostgreSQL with both rows taken ``FOR UPDATE`` in the same order by every server. So the calls
never exceed a limit; tokens and cost, known only when a call ends, overshoot by at most the
calls in flight (docs/online.md, "Budgets").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

from aieval.store._connection import Connection

__all__ = ["OnlineSpendTable", "Reservation", "SpendLimits", "SpendRow"]

#: a period of the ledger (the store sits below ``aieval.online``: its ``WindowKind``)
Period = Literal["hour", "day"]
_SECONDS: dict[str, int] = {"hour": 3600, "day": 86400}

_ROWS = (
    "rule = ? AND ((period = 'hour' AND period_start = ?) OR (period = 'day' AND period_start = ?))"
)


class SpendLimits(Protocol):
    """A rule's limits per period (:class:`aieval.online.Budget`)."""

    def limits(self, period: Period) -> tuple[int | None, int | None, float | None]:
        """``(calls, tokens, cost)`` allowed per ``period`` (``None``: no limit)."""
        ...


@dataclass(frozen=True, slots=True)
class Reservation:
    """One reserved call of ``rule``: counted in the hour and day starting at these times."""

    rule: str
    hour_start: float
    day_start: float


@dataclass(frozen=True, slots=True)
class SpendRow:
    """A rule's spend in one period (``hour`` or ``day`` from ``period_start``, UTC): calls
    reserved, tokens and cost of the calls ended, calls still in flight."""

    rule: str
    period: Period
    period_start: float
    calls: int
    tokens: int
    cost: float
    in_flight: int


class OnlineSpendTable(Connection):
    """The ``online_spend`` table of a :class:`~aieval.store.Store`."""

    def reserve_online_call(self, rule: str, budget: SpendLimits, now: float) -> Reservation | None:
        """Reserve one call of ``rule`` at time ``now``: counted (and in flight) on the hour's
        and the day's rows, or ``None`` (nothing counted) when any limit of ``budget`` is
        reached on either."""
        hour, day = _start(now, "hour"), _start(now, "day")
        db = self._db
        with self._lock:
            try:
                with db.transaction(exclusive=True):
                    for period, start in (("day", day), ("hour", hour)):
                        db.execute(
                            "INSERT INTO online_spend (rule, period, period_start)"
                            " VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                            (rule, period, start),
                        )
                    rows = db.query(
                        "SELECT period, calls, tokens, cost FROM online_spend"
                        f" WHERE {_ROWS} ORDER BY period{db.for_update}",
                        (rule, hour, day),
                    )
                    if not all(_below(budget, r[0], r[1], r[2], r[3]) for r in rows):
                        return None
                    db.execute(
                        "UPDATE online_spend SET calls = calls + 1, in_flight = in_flight + 1"
                        f" WHERE {_ROWS}",
                        (rule, hour, day),
                    )
            except db.errors as exc:
                raise self._failed(exc) from exc
        return Reservation(rule, hour, day)

    def settle_online_call(
        self, reservation: Reservation, tokens: int | None, cost: float | None
    ) -> None:
        """The reserved call ended, using ``tokens`` and costing ``cost`` (``None``: unknown or
        failed, nothing added): added to its hour and day, no longer in flight."""
        self._write(
            "UPDATE online_spend SET tokens = tokens + ?, cost = cost + ?,"
            " in_flight = CASE WHEN in_flight > 0 THEN in_flight - 1 ELSE 0 END"
            f" WHERE {_ROWS}",
            (
                int(tokens or 0),
                float(cost or 0.0),
                reservation.rule,
                reservation.hour_start,
                reservation.day_start,
            ),
        )

    def online_spend(self, rule: str | None = None, since: float = 0.0) -> list[SpendRow]:
        """The spend of ``rule`` (every rule when ``None``) in the periods starting at or after
        ``since``, by rule, then oldest first, days before hours."""
        where, args = ("rule = ? AND ", [rule]) if rule is not None else ("", [])
        rows = self._read(
            "SELECT rule, period, period_start, calls, tokens, cost, in_flight FROM online_spend"
            f" WHERE {where}period_start >= ? ORDER BY rule, period_start, period",
            (*args, since),
        )
        return [
            SpendRow(str(r[0]), _period(r[1]), float(r[2]), int(r[3]), int(r[4]), float(r[5]),
                     int(r[6]))
            for r in rows
        ]  # fmt: skip


def _period(value: object) -> Period:
    return "day" if value == "day" else "hour"


def _below(budget: SpendLimits, period: object, calls: int, tokens: int, cost: float) -> bool:
    """Whether one more call may start in a period that spent ``calls``, ``tokens``, ``cost``."""
    if period not in _SECONDS:
        return False
    limit_calls, limit_tokens, limit_cost = budget.limits(_period(period))
    return (
        (limit_calls is None or int(calls) < limit_calls)
        and (limit_tokens is None or int(tokens) < limit_tokens)
        and (limit_cost is None or float(cost) < limit_cost)
    )


def _start(now: float, period: Period) -> float:
    """The start of the ``period`` holding ``now`` (as ``aieval.online.window_start``)."""
    size = _SECONDS[period]
    return float(math.floor(now / size) * size)
