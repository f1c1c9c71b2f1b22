"""Alert delivery on a thread of its own in a server: the scoring cycle stores incidents and
wakes it; it POSTs them (with their pauses between retries) to the rules' webhooks. A slow or
dead webhook so delays only its own alerts, never the scoring of any rule."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence

from aieval.online._alerts import AlertSender
from aieval.online._model import OnlineRule
from aieval.store import Store, StoreLocation

__all__ = ["AlertDelivery"]

log = logging.getLogger("aieval")


class AlertDelivery:
    """Deliver the undelivered incidents of the rules last given to :meth:`wake`, on a thread
    with its own store connection: at once when woken, else every ``poll_s`` (an incident whose
    webhook failed is tried again). :meth:`stop` ends a pause between retries at once; a POST
    in flight ends by its own deadline."""

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

    def _pause(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _deliver(self, store: Store, rules: Sequence[OnlineRule]) -> None:
        # the pauses between retries end at once when the server stops
        sender = AlertSender(store, sleep=self._pause)
        for rule in rules:
            if self._stop.is_set():
                return
            try:
                sender.deliver(rule)
            except Exception:  # one rule's delivery never stops the others'
                log.exception("online rule %r: its alerts could not be delivered", rule.name)
