"""Alert incidents stored once and delivered once to a rule's webhook.

:class:`AlertSender` stores each incident in ``online_alerts`` (``ON CONFLICT DO NOTHING``: a
second server, or a restart, does not open it again), then POSTs its payload to the rule's
webhook with an ``Idempotency-Key`` header, under a lease so two senders never deliver one
incident at once. Each delivery pass makes at most ONE POST per due incident (never a pause in
line): a failed one (no answer, a redirect, any non-2xx answer) sets when the incident is due
again, :func:`retry_pause` later: 5 s after the first failure, doubled after each further one,
at most an hour apart, for :data:`RETRY_FOR_S` (24 hours) from the incident's opening; the
attempt that fails past that marks it abandoned (kept, listed by ``aieval online status``,
never dropped). Each failure is logged once at WARNING, naming the rule, the incident and the
error. A redirect is never followed (it is recorded as the error), and every POST has one
deadline for connecting, sending and reading together.

The payload holds the rule's name, the incident's key and kind, the metric, and per window its
span, its run's name and id and its figures: never a key, a header of the rule, or anything of
a trace beyond those figures.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from aieval.online._incidents import Incident, figure, incidents
from aieval.online._model import WINDOWS, OnlineRule
from aieval.online._windows import WindowSummary, window_summaries
from aieval.store import Store, StoredAlert

__all__ = [
    "FIRST_PAUSE_S",
    "MAX_PAUSE_S",
    "RETRY_FOR_S",
    "AlertSender",
    "alert_payload",
    "check_alerts",
    "idempotency_key",
    "retry_pause",
]

log = logging.getLogger("aieval")

#: The pause after an incident's first failed POST (doubled after each further failure).
FIRST_PAUSE_S = 5.0
#: The longest pause between two POSTs of one incident.
MAX_PAUSE_S = 3600.0
#: How long after its opening an incident is still retried; the failure past it abandons it.
RETRY_FOR_S = 86400.0
#: Windows read back first when looking for incidents (more when a streak reaches further).
_LOOKBACK = 48


def retry_pause(attempts: int, first_s: float = FIRST_PAUSE_S) -> float:
    """The pause before the next POST of an incident whose ``attempts`` POSTs all failed:
    ``first_s`` doubled after each failure past the first, at most :data:`MAX_PAUSE_S`."""
    return min(MAX_PAUSE_S, first_s * 2.0 ** min(max(attempts - 1, 0), 30))


class AlertSender:
    """Stores incidents in ``store`` and delivers them to their rule's webhook, one POST per due
    incident per call (the retry schedule, not a pause in line, spaces the attempts).

    Args:
        timeout_s: each POST's deadline, connecting, sending and reading the answer together
            (not per read: a receiver trickling bytes is cut at it).
        backoff_s: the pause after the first failed POST (see :func:`retry_pause`).
        retry_for_s: how long after its opening an incident is retried before it is abandoned.
    """

    def __init__(
        self,
        store: Store,
        *,
        timeout_s: float = 10.0,
        backoff_s: float = FIRST_PAUSE_S,
        retry_for_s: float = RETRY_FOR_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.retry_for_s = retry_for_s
        self.clock = clock

    @property
    def lease_s(self) -> float:
        """How long one POST of an incident may take at most (its lease)."""
        return self.timeout_s * 2 + 30.0

    def open(self, rule: OnlineRule, found: list[Incident]) -> list[Incident]:
        """Store each incident not stored yet; answer those this call opened."""
        now = self.clock()
        return [
            incident
            for incident in found
            if self.store.open_alert(
                rule.name, incident.key, incident.kind, alert_payload(rule, incident, now), now
            )
        ]

    def due(self, rule: OnlineRule, limit: int | None = None) -> list[StoredAlert]:
        """Lease ``rule``'s incidents due for a POST now (none without a webhook; at most
        ``limit``), each counting one attempt; answer them as leased."""
        if rule.alert is None or rule.alert.webhook is None:
            return []
        leased: list[StoredAlert] = []
        for alert in self.store.online_alerts(rule.name, undelivered=True):
            if limit is not None and len(leased) >= limit:
                break
            if alert.abandoned_at is not None:
                continue
            now = self.clock()
            if self.store.lease_alert(rule.name, alert.incident, now, now + self.lease_s):
                leased.append(replace(alert, attempts=alert.attempts + 1))
        return leased

    def attempt(self, webhook: str, alert: StoredAlert) -> tuple[int, str]:
        """POST a leased incident once: ``(status, error)`` (see :meth:`record`). Touches no
        store, so attempts may run on other threads."""
        return self._post(webhook, alert)

    def record(self, alert: StoredAlert, status: int, error: str) -> bool:
        """Record a leased incident's attempt: delivered on a 2xx answer (``True``), else due
        again after :func:`retry_pause`, or abandoned once the schedule has ended."""
        now = self.clock()
        if 200 <= status < 300:
            self.store.finish_alert(alert.rule, alert.incident, delivered_at=now, error=None)
            return True
        pause = retry_pause(alert.attempts, self.backoff_s)
        if now + pause > alert.opened_at + self.retry_for_s:
            self.store.finish_alert(
                alert.rule, alert.incident, delivered_at=None, error=error, abandoned_at=now
            )
            log.warning(
                "online rule %r: alert %s not delivered (attempt %d), given up after %s of"
                " retries: %s",
                alert.rule,
                alert.incident,
                alert.attempts,
                _span(now - alert.opened_at),
                error,
            )
            return False
        self.store.finish_alert(
            alert.rule, alert.incident, delivered_at=None, error=error, next_attempt_at=now + pause
        )
        log.warning(
            "online rule %r: alert %s not delivered (attempt %d), next attempt in %s: %s",
            alert.rule,
            alert.incident,
            alert.attempts,
            _span(pause),
            error,
        )
        return False

    def deliver(self, rule: OnlineRule) -> int:
        """Make one POST of each of ``rule``'s due incidents to its webhook (none without one),
        in turn; answer how many were delivered now."""
        webhook = None if rule.alert is None else rule.alert.webhook
        if webhook is None:
            return 0
        return sum(self.record(alert, *self.attempt(webhook, alert)) for alert in self.due(rule))

    def _post(self, webhook: str, alert: StoredAlert) -> tuple[int, str]:
        """POST the alert once: ``(status, error)``; status 0 when no answer came. Any failure
        (a refused connection, a header that cannot be sent, the deadline) is an answer here,
        counted as an attempt with its error: never an exception out of the delivery."""
        try:
            return self._post_within(webhook, alert)
        except Exception as exc:  # one delivery's failure is recorded, never raised
            return 0, f"POST {_where(webhook)}: {type(exc).__name__}: {exc}"

    def _post_within(self, webhook: str, alert: StoredAlert) -> tuple[int, str]:
        url = urlsplit(webhook)
        if url.scheme not in ("http", "https") or not url.hostname:
            return 400, f"webhook {_where(webhook)!r} is not an http(s) URL"
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        body = json.dumps(alert.payload, sort_keys=True).encode()
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": idempotency_key(alert.rule, alert.incident),
            "User-Agent": "aieval-online-alerts",
        }
        # one deadline for the whole POST: a socket timeout bounds each read, not their sum,
        # so a receiver trickling a byte at a time is cut by a timer shutting the socket down
        cut = threading.Event()
        conn = kind(url.hostname, url.port, timeout=self.timeout_s)
        timer = threading.Timer(self.timeout_s, _shut, (conn, cut))
        timer.daemon = True
        timer.start()
        try:
            conn.connect()
            if cut.is_set():  # the deadline passed while connecting (no socket to shut yet)
                raise TimeoutError("connecting took the whole deadline")
            conn.request("POST", path, body=body, headers=headers)
            answer = conn.getresponse()
            answer.read(65536)
            status = answer.status
            where = answer.getheader("Location")
        except (OSError, http.client.HTTPException) as exc:
            if cut.is_set():
                limit = f"no answer within {self.timeout_s:g} s (the whole POST's deadline)"
                return 0, f"POST {_where(webhook)}: {limit}"
            return 0, f"POST {_where(webhook)}: {type(exc).__name__}: {exc}"
        finally:
            timer.cancel()
            conn.close()
        if cut.is_set():  # a read cut short may look like a whole answer: it is not one
            return (
                0,
                f"POST {_where(webhook)}: no answer within {self.timeout_s:g} s (the deadline)",
            )
        if 300 <= status < 400:
            moved = "nowhere" if not where else _where(where)
            return (
                status,
                f"POST {_where(webhook)}: answered {status} (redirect to {moved} not followed)",
            )
        return status, "" if status < 300 else f"POST {_where(webhook)}: answered {status}"


def _where(webhook: str) -> str:
    """A webhook as errors, logs and the status name it: its scheme, host and port only (the
    path and query of a chat webhook are its secret)."""
    try:
        url = urlsplit(webhook)
        host = url.hostname or ""
        port = f":{url.port}" if url.port else ""
    except ValueError:  # a port out of range: still never the path
        return "the rule's webhook (not a valid URL)"
    return f"{url.scheme}://{host}{port}/…" if url.scheme else "the rule's webhook"


def _span(seconds: float) -> str:
    """A duration as a person reads it: ``40 s``, ``5 min``, ``3.0 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def idempotency_key(rule: str, incident: str) -> str:
    """The ``Idempotency-Key`` header of an incident: ``<rule>/<incident key>``, percent-encoded
    as UTF-8 (RFC 3986) so any rule name can be sent; an ASCII name without ``%``, spaces or
    reserved characters reads as it is."""
    return quote(f"{rule}/{incident}", safe="/:")


def _shut(conn: http.client.HTTPConnection, cut: threading.Event) -> None:
    """End a POST at its deadline: shutting the socket down wakes a blocked read at once."""
    cut.set()
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


def _window(summary: WindowSummary, metric: str) -> dict[str, Any]:
    fig = figure(summary, metric)
    return {
        "start": _iso(summary.start),
        "end": _iso(summary.end),
        "run": summary.run_name,
        "run_id": summary.run_id,
        "scored": summary.scored,
        "passed": summary.passed,
        "n": None if fig is None else fig.n,
        "estimate": None if fig is None else fig.interval.estimate,
        "low": None if fig is None else fig.interval.low,
        "high": None if fig is None else fig.interval.high,
    }


def alert_payload(rule: OnlineRule, incident: Incident, opened_at: float) -> dict[str, Any]:
    """What the webhook is sent: ids and figures only."""
    policy = rule.alert
    return {
        "rule": rule.name,
        "incident": incident.key,
        "kind": incident.kind,
        "metric": incident.metric,
        "opened_at": _iso(opened_at),
        "floor": None if policy is None else policy.floor,
        "consecutive": None if policy is None else policy.consecutive,
        "alpha": None if policy is None else policy.alpha,
        "p_value": incident.p_value,
        "windows": [_window(s, incident.metric) for s in incident.windows],
        "baseline": None
        if incident.baseline is None
        else _window(incident.baseline, incident.metric),
    }


def _named_baseline(store: Store, rule: OnlineRule) -> WindowSummary | None:
    label = None if rule.alert is None else rule.alert.baseline
    if label is None or label == "previous":
        return None
    shape = "%Y-%m-%d" if rule.window == "day" else "%Y-%m-%dT%H"
    try:
        start = datetime.strptime(label, shape).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None
    found = window_summaries(store, rule, since=start, until=start + 1)
    return found[0] if found else None


def _from_start(summaries: list[WindowSummary], incident: Incident, least: int) -> bool:
    """Whether a floor streak reaches back to the first window read: no window before it
    counts (a window that does not count does not break a streak)."""
    if incident.kind != "floor":
        return False
    first = incident.windows[0].start
    return not any(
        s.closed and (f := figure(s, incident.metric)) is not None and f.n >= least
        for s in summaries
        if s.start < first
    )


def check_alerts(
    store: Store,
    rule: OnlineRule,
    now: float | None = None,
    sender: AlertSender | None = None,
    *,
    deliver: bool = True,
) -> list[Incident]:
    """Look for ``rule``'s incidents in its recent windows, store the new ones and (unless not
    ``deliver``) deliver every undelivered one; answer the incidents opened now. A plain
    function: the online service calls it each cycle, on any number of servers, without
    delivering (its own thread delivers)."""
    if rule.alert is None:
        return []
    at = time.time() if now is None else now
    sender = sender or AlertSender(store)
    named = _named_baseline(store, rule)
    size = WINDOWS[rule.window]
    span = max(_LOOKBACK, 4 * rule.alert.consecutive)
    while True:
        since = at - span * size
        summaries = window_summaries(store, rule, since=since)
        found = incidents(summaries, rule.alert, named)
        # a floor streak reaching the lookback's start may have begun earlier: its key is its
        # first window, so read further back until the streak's start is seen
        reaches = any(_from_start(summaries, i, rule.alert.min_samples) for i in found)
        if not reaches or not store.online_windows(rule.name, until=since):
            break
        span *= 2
    opened = sender.open(rule, found)
    if deliver:
        sender.deliver(rule)
    return opened
