"""Alert delivery on a thread of its own in a server: the scoring cycle stores incidents and
wakes it; it POSTs them to the rules' webhooks. A slow or dead webhook so delays only its own
alerts, never the scoring of any rule.

Each pass leases the due incidents (up to :data:`PARALLEL` of each rule and :data:`PER_PASS`
in all, the rules taken in turn) and makes ONE POST of each, up to :data:`PARALLEL` at once,
recording each outcome as soon as it comes: one incident's dead webhook holds one slot for at
most its POST's deadline and never delays another's delivery beyond that (the retry schedule
of :func:`~aieval.online.retry_pause` spaces its attempts, no pause is taken in line). The
store is used by this thread only; the POSTs touch none."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed

from aieval.online._alerts import AlertSender
from aieval.online._model import OnlineRule
from aieval.store import Store, StoredAlert, StoreLocation

__all__ = ["PARALLEL", "PER_PASS", "AlertDelivery"]

log = logging.getLogger("aieval")

#: POSTs in flight at once in one delivery pass.
PARALLEL = 4
#: Incidents leased in one pass: 4 rounds of :data:`PARALLEL` POSTs, each within its deadline,
#: end inside the lease of the last one waiting (the rest are due on the next pass).
PER_PASS = 4 * PARALLEL


class AlertDelivery:
    """Deliver the undelivered incidents of the rules last given to :meth:`wake`, on a thread
    with its own store connection: at once when woken, else every ``poll_s`` (an incident whose
    webhook failed is tried again once its retry is due). :meth:`stop` ends the wait at once;
    a POST in flight ends by its own deadline."""

    def __init__(
        self, location: str | os.PathLike[str] | StoreLocation, *, poll_s: float = 5.0
    ) -> None:
        self.location = location
        self.poll_s = poll_s
        self.rounds = 0
        self._rules: tuple[OnlineRule, ...] = ()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="aieval-alerts", daemon=True)
            self._thread.start()

    def wake(self, rules: Sequence[OnlineRule]) -> None:
        """Deliver now for ``rules`` (those with a webhook; the others store incidents only)."""
        with self._lock:
            self._rules = tuple(r for r in rules if r.alert is not None and r.alert.webhook)
        self._wake.set()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop after the POST in hand, and join the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        store: Store | None = None
        try:
            while not self._stop.is_set():
                self._wake.wait(self.poll_s)
                self._wake.clear()
                if self._stop.is_set():
                    break
                with self._lock:
                    rules = self._rules
                if rules and store is None:
                    store = Store(self.location)
                if store is not None:
                    self._deliver(store, rules)
                self.rounds += 1
        finally:
            if store is not None:
                store.close()

    def _deliver(self, store: Store, rules: Sequence[OnlineRule]) -> None:
        sender = AlertSender(store)
        with ThreadPoolExecutor(PARALLEL, thread_name_prefix="aieval-alert-post") as pool:
            posts: dict[Future[tuple[int, str]], StoredAlert] = {}
            # each rule at most PARALLEL per pass, starting one rule further on each pass, so
            # no rule's backlog keeps another's incidents waiting
            turn = self.rounds % len(rules) if rules else 0
            for rule in (*rules[turn:], *rules[:turn]):
                if self._stop.is_set() or len(posts) >= PER_PASS:
                    break
                webhook = None if rule.alert is None else rule.alert.webhook
                if webhook is None:
                    continue
                try:
                    due = sender.due(rule, min(PARALLEL, PER_PASS - len(posts)))
                except Exception:  # one rule's store trouble never stops the others'
                    log.exception("online rule %r: its alerts could not be read", rule.name)
                    continue
                for alert in due:
                    posts[pool.submit(sender.attempt, webhook, alert)] = alert
            for done in as_completed(posts):
                alert = posts[done]
                try:
                    sender.record(alert, *done.result())
                except Exception:  # one incident's record never stops the others'
                    log.exception(
                        "online rule %r: alert %s: its delivery could not be recorded",
                        alert.rule,
                        alert.incident,
                    )
