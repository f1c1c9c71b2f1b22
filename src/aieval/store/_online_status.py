"""The store's half of ``aieval online status``: the online work queue counted in SQL.

Each figure is one grouped query over ``online_work`` (per rule and window, per rule, and in
all), ``online_windows`` joined to the window runs' samples, and ``online_spend``: the rows are
counted by the database, never read back one by one. The same SQL runs on SQLite and
PostgreSQL (``CASE`` rather than either one's two-argument ``max``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aieval.store._connection import Connection

__all__ = [
    "OnlineCountsRow",
    "OnlineErrorRow",
    "OnlineRuleRow",
    "OnlineSpendRow",
    "OnlineStatusTable",
    "OnlineWindowRow",
]

#: The skip reasons counted (aieval.online.SKIP_REASONS; the store sits below that package).
_REASONS = ("sampled_out", "budget_exhausted", "incomplete", "error")
#: An error message as shown: its first characters (the full text stays in the store).
_MESSAGE_CHARS = 500


@dataclass(frozen=True, slots=True)
class OnlineCountsRow:
    """Counts of a group of matched traces (a rule's window, a rule, or all).

    ``ready_since``: the earliest time a pending item could be claimed (its match, or its
    ``not_before`` when later) among those claimable at the time asked; ``None``: none.
    """

    matched: int = 0
    scored: int = 0
    skipped: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    claimed: int = 0
    expired_claims: int = 0
    oldest_pending_at: float | None = None
    ready_since: float | None = None
    last_finished_at: float | None = None


@dataclass(frozen=True, slots=True)
class OnlineWindowRow:
    """A rule's window: its work counts and, once one of its traces was scored, its run with
    the samples' pass counts (``judged``: samples with a pass flag)."""

    rule: str
    window_start: float
    counts: OnlineCountsRow
    run_id: str | None = None
    run_name: str | None = None
    window_end: float | None = None
    closed: bool = False
    samples: int = 0
    judged: int = 0
    passed: int = 0


@dataclass(frozen=True, slots=True)
class OnlineRuleRow:
    """A stored rule: its spec (the rule as JSON), where it came from, whether paused."""

    name: str
    spec: str
    source: str
    paused: bool


@dataclass(frozen=True, slots=True)
class OnlineSpendRow:
    """A rule's spend in one period (``hour`` or ``day`` starting at ``period_start``)."""

    rule: str
    period: str
    period_start: float
    calls: int
    tokens: int
    cost: float
    in_flight: int


@dataclass(frozen=True, slots=True)
class OnlineErrorRow:
    """One of a rule's most common scoring error messages and how many traces ended with it."""

    rule: str
    message: str
    count: int


def _counts_sql(group: Sequence[str], where: str = "") -> str:
    """The counting query over ``online_work`` grouped by ``group`` (none: in all), of the
    rows meeting ``where``. Its first two parameters are the time asked (claims expired
    before it; pending items ready by it)."""
    reasons = "".join(
        f", sum(CASE WHEN state = 'skipped' AND reason = '{r}' THEN 1 ELSE 0 END)" for r in _REASONS
    )
    ready = "CASE WHEN not_before > matched_at THEN not_before ELSE matched_at END"
    keys = "".join(f"{column}, " for column in group)
    by = f" GROUP BY {', '.join(group)} ORDER BY {', '.join(group)}" if group else ""
    return (
        f"SELECT {keys}count(*),"
        " sum(CASE WHEN state = 'scored' THEN 1 ELSE 0 END),"
        " sum(CASE WHEN state = 'skipped' THEN 1 ELSE 0 END)"
        f"{reasons},"
        " sum(CASE WHEN state = 'pending' THEN 1 ELSE 0 END),"
        " sum(CASE WHEN state = 'claimed' THEN 1 ELSE 0 END),"
        " sum(CASE WHEN state = 'claimed' AND claimed_until < ? THEN 1 ELSE 0 END),"
        " min(CASE WHEN state = 'pending' THEN matched_at END),"
        f" min(CASE WHEN state = 'pending' AND not_before <= ? THEN {ready} END),"
        " max(finished_at)"
        f" FROM online_work{where}{by}"
    )


def _counts(values: Sequence[Any]) -> OnlineCountsRow:
    n = len(_REASONS)
    by_reason = {r: int(values[3 + i] or 0) for i, r in enumerate(_REASONS)}
    rest = values[3 + n :]
    return OnlineCountsRow(
        matched=int(values[0] or 0),
        scored=int(values[1] or 0),
        skipped=int(values[2] or 0),
        by_reason=by_reason,
        pending=int(rest[0] or 0),
        claimed=int(rest[1] or 0),
        expired_claims=int(rest[2] or 0),
        oldest_pending_at=None if rest[3] is None else float(rest[3]),
        ready_since=None if rest[4] is None else float(rest[4]),
        last_finished_at=None if rest[5] is None else float(rest[5]),
    )


class OnlineStatusTable(Connection):
    """The online status reads of a :class:`~aieval.store.Store`."""

    def online_rule_rows(self) -> list[OnlineRuleRow]:
        """Every stored rule, by name."""
        rows = self._read("SELECT name, spec, source, paused FROM online_rules ORDER BY name")
        return [OnlineRuleRow(str(n), str(s), str(src), bool(p)) for n, s, src, p in rows]

    def online_counts(self, now: float) -> OnlineCountsRow:
        """The counts of every matched trace of every rule."""
        row = self._read_one(_counts_sql(()), (now, now))
        return _counts(row) if row is not None else OnlineCountsRow()

    def online_rule_counts(self, now: float) -> dict[str, OnlineCountsRow]:
        """The counts of each rule's matched traces, by rule."""
        rows = self._read(_counts_sql(("rule",)), (now, now))
        return {str(r[0]): _counts(r[1:]) for r in rows}

    def online_window_rows(self, now: float, since: float = 0.0) -> list[OnlineWindowRow]:
        """Each rule's windows starting at ``since`` or later (those with matched traces, and
        those with a stored run), by rule and window start: the work counts, the window run
        and its pass counts."""
        by_window = _counts_sql(("rule", "window_start"), " WHERE window_start >= ?")
        counted = {
            (str(r[0]), float(r[1])): _counts(r[2:])
            for r in self._read(by_window, (now, now, since))
        }
        runs = self._read(
            "SELECT w.rule, w.window_start, w.window_end, w.run_id, w.closed, r.name,"
            " count(s.sample_id),"
            " sum(CASE WHEN s.passed IS NOT NULL THEN 1 ELSE 0 END),"
            " sum(CASE WHEN s.passed = 1 THEN 1 ELSE 0 END)"
            " FROM online_windows w LEFT JOIN runs r ON r.id = w.run_id"
            " LEFT JOIN samples s ON s.run_id = w.run_id WHERE w.window_start >= ?"
            " GROUP BY w.rule, w.window_start, w.window_end, w.run_id, w.closed, r.name",
            (since,),
        )
        stored = {(str(r[0]), float(r[1])): r for r in runs}
        windows = []
        for key in sorted(set(counted) | set(stored)):
            run = stored.get(key)
            counts = counted.get(key, OnlineCountsRow())
            if run is None:
                windows.append(OnlineWindowRow(key[0], key[1], counts))
                continue
            windows.append(
                OnlineWindowRow(
                    rule=key[0],
                    window_start=key[1],
                    counts=counts,
                    run_id=str(run[3]),
                    run_name=None if run[5] is None else str(run[5]),
                    window_end=float(run[2]),
                    closed=bool(run[4]),
                    samples=int(run[6] or 0),
                    judged=int(run[7] or 0),
                    passed=int(run[8] or 0),
                )
            )
        return windows

    def online_top_errors(self, limit: int = 5) -> list[OnlineErrorRow]:
        """Each rule's ``limit`` most common scoring error messages (most common first)."""
        rows = self._read(
            "SELECT rule, message, n FROM (SELECT rule, message, count(*) AS n,"
            " row_number() OVER (PARTITION BY rule ORDER BY count(*) DESC, message) AS k"
            " FROM online_work WHERE state = 'skipped' AND reason = 'error'"
            " GROUP BY rule, message) AS e WHERE k <= ? ORDER BY rule, k",
            (limit,),
        )
        return [
            OnlineErrorRow(str(rule), str(message or "")[:_MESSAGE_CHARS], int(n))
            for rule, message, n in rows
        ]

    def online_spend_rows(self, hour_start: float, day_start: float) -> list[OnlineSpendRow]:
        """Each rule's spend in the hour and the day starting at the times given."""
        rows = self._read(
            "SELECT rule, period, period_start, calls, tokens, cost, in_flight FROM online_spend"
            " WHERE (period = 'hour' AND period_start = ?) OR (period = 'day' AND period_start = ?)"
            " ORDER BY rule, period",
            (hour_start, day_start),
        )
        return [
            OnlineSpendRow(str(r), str(p), float(s), int(c), int(t), float(cost), int(f))
            for r, p, s, c, t, cost, f in rows
        ]
