"""What ``aieval online status``, ``GET /api/online/status`` and the viewer's Online page show:
per rule and window, what became of the matched traces, the spend against the budget, the lag,
whether the rule's traces are being processed at all, and how the delivery of its alert
incidents went (an undelivered or abandoned incident is listed with its last error).

Every matched trace has one work item, in exactly one state (pending, claimed, scored or
skipped with one reason), so ``matched == scored + skipped + pending + claimed`` holds by
construction; each figure carries the check (``adds_up``) so that a store that breaks it (a
state no version writes) is shown, never hidden. The figures are counted by the store in SQL
(:mod:`aieval.store._online_status`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

from aieval.errors import ConfigError
from aieval.online._model import (
    SKIP_REASONS,
    WINDOWS,
    Budget,
    OnlineRule,
    SkipReason,
    WindowKind,
    window_run_name,
    window_start,
)
from aieval.online._rules import rule_from_json
from aieval.stats import wilson_interval
from aieval.store import OnlineCountsRow, OnlineSpendRow, OnlineWindowRow, Store, StoredAlert

__all__ = [
    "FAILING_AFTER",
    "HISTORY_S",
    "STALL_AFTER_S",
    "AlertStatus",
    "ErrorCount",
    "OnlineStatus",
    "RuleStatus",
    "SpendStatus",
    "WindowStatus",
    "WorkCounts",
    "online_status",
]

#: A claimable item waiting longer than this (seconds) means nobody is processing the rule.
STALL_AFTER_S = 300.0
#: How far back (seconds) a rule's windows are listed: a week.
HISTORY_S = 7 * 86400.0
#: Failed POSTs after which an undelivered incident is ``failing`` (``aieval online status``
#: exits 1): its first attempts (about 15 s of retries) did not reach the webhook.
FAILING_AFTER = 3

AlertState = Literal["delivered", "retrying", "failing", "abandoned"]


@dataclass(frozen=True, slots=True)
class AlertStatus:
    """One alert incident of a rule and how its delivery went.

    Attributes:
        state: ``delivered``; ``retrying`` (undelivered, fewer than :data:`FAILING_AFTER`
            failed POSTs); ``failing`` (undelivered, still retried on its schedule);
            ``abandoned`` (undelivered, retried for the whole schedule and given up).
        next_attempt_at: when it is tried again (``None``: delivered, abandoned, or due).
    """

    incident: str
    kind: str
    opened_at: float
    state: AlertState
    delivered_at: float | None
    attempts: int
    last_error: str | None
    next_attempt_at: float | None
    abandoned_at: float | None

    @property
    def undelivered(self) -> bool:
        """Whether its webhook has not received it (yet, or ever)."""
        return self.state != "delivered"

    @property
    def alarming(self) -> bool:
        """Whether delivery failed past its first attempts, or was given up."""
        return self.state in ("failing", "abandoned")


@dataclass(frozen=True, slots=True)
class WorkCounts:
    """What became of a group of matched traces.

    Attributes:
        matched: traces the rule's filter matched (one work item each).
        scored: scored, their samples in the window's run.
        skipped: skipped, by reason (every reason present, 0 when none).
        pending: waiting to be claimed (or for their spans).
        claimed: being scored by a server now (``expired_claims`` of them past their lease:
            the server holding them stopped; any server takes them over).
        adds_up: ``matched == scored + skipped + pending + claimed`` (true by construction).
    """

    matched: int
    scored: int
    skipped: dict[SkipReason, int]
    skipped_total: int
    pending: int
    claimed: int
    expired_claims: int
    adds_up: bool


@dataclass(frozen=True, slots=True)
class WindowStatus:
    """One window of a rule: its counts, and its run once a trace in it was scored.

    ``pass_rate`` is over the run's samples with a pass flag (``judged``), with a 95% Wilson
    interval (``None`` before any)."""

    start: float
    end: float
    name: str
    run_id: str | None
    closed: bool
    counts: WorkCounts
    samples: int
    judged: int
    passed: int
    pass_rate: float | None
    pass_low: float | None
    pass_high: float | None


@dataclass(frozen=True, slots=True)
class SpendStatus:
    """A rule's spend in the current hour or day against its limits (``None``: no limit);
    ``exhausted``: a limit is reached, so no model call of the rule starts this period."""

    period: WindowKind
    period_start: float
    calls: int
    tokens: int
    cost: float
    in_flight: int
    calls_limit: int | None
    tokens_limit: int | None
    cost_limit: float | None
    exhausted: bool


@dataclass(frozen=True, slots=True)
class ErrorCount:
    """A scoring error message and how many of the rule's traces ended with it."""

    message: str
    count: int


@dataclass(frozen=True, slots=True)
class RuleStatus:
    """One rule's status.

    Attributes:
        source: ``file`` (``aieval serve --online``), ``api``, or ``None`` for a rule no
            longer stored whose work remains.
        lag_s: the age of its oldest pending item (``None``: none pending).
        last_finished_at: when an item of it last ended (scored or skipped).
        stalled: its matched traces are not being processed; ``stalled_reason`` says why.
    """

    name: str
    source: str | None
    paused: bool
    window: WindowKind
    budget: Budget
    spend: tuple[SpendStatus, ...]
    counts: WorkCounts
    lag_s: float | None
    last_finished_at: float | None
    errors: tuple[ErrorCount, ...]
    windows: tuple[WindowStatus, ...]
    stalled: bool
    stalled_reason: str | None
    #: its undelivered incidents (any age) and those delivered that opened within the history
    alerts: tuple[AlertStatus, ...] = ()


@dataclass(frozen=True, slots=True)
class OnlineStatus:
    """Every rule's status at ``now`` and the counts over all of them."""

    now: float
    stall_after_s: float
    counts: WorkCounts
    rules: tuple[RuleStatus, ...]
    #: received traces due for examination (settled for a rule, or with spans arrived since
    #: they were examined) and not examined yet: not counted by any rule until they are
    unexamined: int = 0
    #: how long the longest of them has waited (``None``: none)
    unexamined_lag_s: float | None = None

    @property
    def adds_up(self) -> bool:
        """Whether every rule's and window's counts add up."""
        return self.counts.adds_up and all(
            r.counts.adds_up and all(w.counts.adds_up for w in r.windows) for r in self.rules
        )

    def to_dict(self) -> dict[str, Any]:
        """The status as plain JSON types."""
        return asdict(self)


def online_status(
    store: Store,
    now: float,
    *,
    stall_after_s: float = STALL_AFTER_S,
    history_s: float = HISTORY_S,
) -> OnlineStatus:
    """The status of every online rule stored in ``store`` (and of any rule whose work remains
    after it was deleted) at time ``now`` (epoch seconds), listing the windows that started in
    the last ``history_s`` seconds (the rule's counts, lag and stalled flag cover every one)."""
    rules = {row.name: row for row in store.online_rule_rows()}
    counts = store.online_rule_counts(now)
    windows: dict[str, list[OnlineWindowRow]] = {}
    for window in store.online_window_rows(now, window_start(now - history_s, "hour")):
        windows.setdefault(window.rule, []).append(window)
    errors: dict[str, list[ErrorCount]] = {}
    for error in store.online_top_errors():
        errors.setdefault(error.rule, []).append(ErrorCount(error.message, error.count))
    alerts: dict[str, list[AlertStatus]] = {}
    for stored_alert in store.online_alerts():
        if stored_alert.delivered_at is None or stored_alert.opened_at >= now - history_s:
            alerts.setdefault(stored_alert.rule, []).append(_alert(stored_alert))
    spend: dict[str, list[OnlineSpendRow]] = {}
    for row in store.online_spend_rows(window_start(now, "hour"), window_start(now, "day")):
        spend.setdefault(row.rule, []).append(row)
    unexamined, due_since = store.unexamined_traces(now)
    unexamined_lag = None if due_since is None else now - due_since
    statuses = []
    for name in sorted(set(rules) | set(counts) | set(windows) | set(alerts)):
        stored = rules.get(name)
        rule = _rule_read(stored.spec) if stored is not None else None
        budget, kind = (rule.budget, rule.window) if isinstance(rule, OnlineRule) else _NO_LIMITS
        paused = stored.paused if stored is not None else False
        work = counts.get(name, OnlineCountsRow())
        stalled_reason = _stalled(work, paused, now, stall_after_s)
        if isinstance(rule, ConfigError):  # the workers pass it over: nothing of it is scored
            unreadable = f"the rule cannot be read ({rule}): fix or delete it"
            stalled_reason = "; ".join(filter(None, (unreadable, stalled_reason)))
        if stored is not None and not paused:
            stalled_reason = _unexamined_stall(stalled_reason, unexamined_lag, stall_after_s)
        statuses.append(
            RuleStatus(
                name=name,
                source=stored.source if stored is not None else None,
                paused=paused,
                window=kind,
                budget=budget,
                spend=_spend(budget, spend.get(name, []), now),
                counts=_work(work),
                lag_s=None if work.oldest_pending_at is None else now - work.oldest_pending_at,
                last_finished_at=work.last_finished_at,
                errors=tuple(errors.get(name, ())),
                windows=tuple(_window(w, kind) for w in windows.get(name, ())),
                stalled=stalled_reason is not None,
                stalled_reason=stalled_reason,
                alerts=tuple(alerts.get(name, ())),
            )
        )
    return OnlineStatus(
        now=now,
        stall_after_s=stall_after_s,
        counts=_work(store.online_counts(now)),
        rules=tuple(statuses),
        unexamined=unexamined,
        unexamined_lag_s=unexamined_lag,
    )


def _alert(stored: StoredAlert) -> AlertStatus:
    state: AlertState = "delivered"
    if stored.abandoned_at is not None:
        state = "abandoned"
    elif stored.delivered_at is None:
        state = "failing" if stored.attempts >= FAILING_AFTER else "retrying"
    return AlertStatus(
        incident=stored.incident,
        kind=stored.kind,
        opened_at=stored.opened_at,
        state=state,
        delivered_at=stored.delivered_at,
        attempts=stored.attempts,
        last_error=stored.last_error,
        next_attempt_at=stored.next_attempt_at,
        abandoned_at=stored.abandoned_at,
    )


def _rule_read(spec: str) -> OnlineRule | ConfigError:
    """A stored rule read from its spec (:func:`rule_from_json`), or why it does not read: a
    spec that no longer reads shows as a stalled rule with no limits and hourly windows, never
    as a failure of status (the worker passes it over, logging it)."""
    try:
        return rule_from_json(spec)
    except ConfigError as exc:
        return exc


#: What status shows of a rule it cannot read: no limits, hourly windows.
_NO_LIMITS: tuple[Budget, WindowKind] = (Budget(), "hour")


def _work(row: OnlineCountsRow) -> WorkCounts:
    skipped = {r: row.by_reason.get(r, 0) for r in SKIP_REASONS}
    return WorkCounts(
        matched=row.matched,
        scored=row.scored,
        skipped=skipped,
        skipped_total=row.skipped,
        pending=row.pending,
        claimed=row.claimed,
        expired_claims=row.expired_claims,
        adds_up=(
            row.matched == row.scored + row.skipped + row.pending + row.claimed
            and row.skipped == sum(skipped.values())
        ),
    )


def _window(row: OnlineWindowRow, kind: WindowKind) -> WindowStatus:
    if row.window_end is not None:
        kind = "day" if row.window_end - row.window_start >= WINDOWS["day"] else "hour"
    rate = low = high = None
    if row.judged:
        interval = wilson_interval(row.passed, row.judged)
        rate, low, high = row.passed / row.judged, interval.low, interval.high
    return WindowStatus(
        start=row.window_start,
        end=row.window_end if row.window_end is not None else row.window_start + WINDOWS[kind],
        name=row.run_name or window_run_name(row.rule, row.window_start, kind),
        run_id=row.run_id,
        closed=row.closed,
        counts=_work(row.counts),
        samples=row.samples,
        judged=row.judged,
        passed=row.passed,
        pass_rate=rate,
        pass_low=low,
        pass_high=high,
    )


def _spend(budget: Budget, rows: list[OnlineSpendRow], now: float) -> tuple[SpendStatus, ...]:
    """The spend of the current hour and day (zero when nothing was spent) against the limits."""
    found = {row.period: row for row in rows}
    periods: list[SpendStatus] = []
    kinds: tuple[WindowKind, ...] = ("hour", "day")
    for kind in kinds:
        row = found.get(kind)
        calls_limit, tokens_limit, cost_limit = budget.limits(kind)
        calls, tokens, cost = (row.calls, row.tokens, row.cost) if row else (0, 0, 0.0)
        exhausted = (
            (calls_limit is not None and calls >= calls_limit)
            or (tokens_limit is not None and tokens >= tokens_limit)
            or (cost_limit is not None and cost >= cost_limit)
        )
        periods.append(
            SpendStatus(
                period=kind,
                period_start=row.period_start if row else window_start(now, kind),
                calls=calls,
                tokens=tokens,
                cost=cost,
                in_flight=row.in_flight if row else 0,
                calls_limit=calls_limit,
                tokens_limit=tokens_limit,
                cost_limit=cost_limit,
                exhausted=exhausted,
            )
        )
    return tuple(periods)


def _stalled(row: OnlineCountsRow, paused: bool, now: float, after_s: float) -> str | None:
    """Why the rule's matched traces are not being processed, in words (``None``: they are)."""
    reasons = []
    if row.expired_claims:
        reasons.append(
            f"{row.expired_claims} claimed item(s) are past their lease: the server scoring"
            " them stopped (any running server takes them over)"
        )
    if row.ready_since is not None and now - row.ready_since > after_s:
        waited = _duration(now - row.ready_since)
        if paused:
            reasons.append(
                f"the rule is paused: {row.pending} pending item(s) wait, the oldest for"
                f" {waited}; resume it to score them"
            )
        else:
            finished = (
                "no item of it has ever finished"
                if row.last_finished_at is None
                else f"the last item finished {_duration(now - row.last_finished_at)} ago"
            )
            reasons.append(
                f"no server is claiming its items: {row.pending} pending item(s), the oldest"
                f" claimable for {waited} (more than {_duration(after_s)}); {finished}"
            )
    return "; ".join(reasons) or None


def _unexamined_stall(reason: str | None, lag_s: float | None, after_s: float) -> str | None:
    """An active rule's stall ``reason`` with, when received traces have waited more than
    ``after_s`` to be examined, that said too: no rule can match a trace no server examines."""
    if lag_s is None or lag_s <= after_s:
        return reason
    waited = f"traces received {_duration(lag_s)} ago are not being examined: no server is scoring"
    return waited if reason is None else f"{reason}; {waited}"


def _duration(seconds: float) -> str:
    """``seconds`` in words: ``45s``, ``12m``, ``3h 5m``, ``2d 4h``."""
    s = max(0, math.floor(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"
