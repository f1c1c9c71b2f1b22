"""Online scoring in a server: one worker on a thread of its own, examining settled traces and
scoring matched ones every poll interval (or at once when woken), idle while the store holds
no active rule. Rules are read from the store each cycle, so a rule added, paused or deleted
(by the command line or the API) takes effect at the next one."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from aieval._files import confined_to
from aieval.errors import ConfigError
from aieval.online._alerts import check_alerts
from aieval.online._delivery import AlertDelivery
from aieval.online._model import OnlineRule
from aieval.online._worker import LEASE_S, BudgetSeam, OnlineWorker
from aieval.store import StoreLocation

__all__ = ["LEASE_ENV", "POLL_S", "OnlineService", "lease_from_env"]

log = logging.getLogger("aieval")

#: Seconds between two cycles when nothing wakes the service.
POLL_S = 5.0
#: Batches of work one cycle claims at most before looking for new traces again.
_ROUNDS = 20
#: The environment variable setting a server's claim lease in seconds (default ``LEASE_S``).
LEASE_ENV = "AIEVAL_ONLINE_LEASE_S"


def lease_from_env() -> float:
    """The claim lease ``AIEVAL_ONLINE_LEASE_S`` sets (``LEASE_S`` when unset).

    Raises:
        ConfigError: the value is not a number of seconds above 0 (at most a day).
    """
    given = os.environ.get(LEASE_ENV, "").strip()
    if not given:
        return LEASE_S
    try:
        lease = float(given)
    except ValueError:
        lease = -1.0
    if not 0 < lease <= 86_400:  # also refuses nan and inf
        raise ConfigError(
            f"{LEASE_ENV}={given!r}: give the seconds a claim holds its traces, above 0 and"
            f" at most 86400 (default {LEASE_S:g})"
        )
    return lease


class OnlineService:
    """Run an :class:`OnlineWorker` on the store at ``location`` in a thread: :meth:`start`,
    :meth:`wake` (a cycle now), :meth:`stop` (joins the thread). A failing cycle is logged and
    the next one runs: one bad trace or a store that is briefly away never stops the service.
    Files a rule names (a workflow, a profile) are read only inside ``roots`` when given.
    ``lease_s`` is how long a claim holds its rows (default: ``AIEVAL_ONLINE_LEASE_S``, else
    ``LEASE_S``); keep it well above the time a batch takes to score, or another server takes
    over rows still being scored and their judges are called again."""

    def __init__(
        self,
        location: str | os.PathLike[str] | StoreLocation,
        *,
        worker_id: str | None = None,
        poll_s: float = POLL_S,
        budget: BudgetSeam | None = None,
        roots: Sequence[Path] | None = None,
        lease_s: float | None = None,
    ) -> None:
        self.location = location
        self.lease_s = lease_from_env() if lease_s is None else lease_s
        self.worker_id = worker_id
        self.poll_s = poll_s
        self.budget = budget
        self.roots = tuple(roots) if roots is not None else None
        self.cycles = 0
        self._started = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._done = threading.Condition()
        self._thread: threading.Thread | None = None
        # alerts are POSTed on a thread of their own: a slow webhook never holds up scoring
        self.alerts = AlertDelivery(location, poll_s=poll_s)

    def start(self) -> None:
        """Start the service's thread (once), and its alert delivery's."""
        if self._thread is None:
            self.alerts.start()
            self._thread = threading.Thread(target=self._loop, name="aieval-online", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Run a cycle now rather than at the next poll."""
        self._wake.set()

    def cycle_now(self, timeout: float | None = None) -> bool:
        """Wake the service and wait until a cycle that began after this call ended; whether
        one did within ``timeout``."""
        with self._done:
            # the cycles are numbered as they begin: the next number began after this call
            target = self._started + 1
            self._wake.set()
            return self._done.wait_for(
                lambda: self.cycles >= target or self._stop.is_set(), timeout
            )

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop after the batch in hand, and join the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.alerts.stop(timeout)
        with self._done:
            self._done.notify_all()

    def _loop(self) -> None:
        worker: OnlineWorker | None = None
        try:
            while not self._stop.is_set():
                with self._done:
                    self._wake.clear()
                    self._started += 1
                try:
                    if worker is None:
                        worker = OnlineWorker(
                            self.location, self.worker_id, budget=self.budget, lease_s=self.lease_s
                        )
                    self._cycle(worker)
                except Exception:
                    log.exception("online scoring: a cycle failed; the next one runs as usual")
                with self._done:
                    self.cycles += 1
                    self._done.notify_all()
                self._wake.wait(self.poll_s)
        finally:
            if worker is not None:
                worker.close()

    def _cycle(self, worker: OnlineWorker) -> None:
        """Examine settled traces, then work the queue until it is empty (or stopping)."""
        rules = worker.active_rules()
        if not rules:
            return
        if self.roots is None:
            self._work(worker, rules)
        else:
            with confined_to(self.roots):
                self._work(worker, rules)

    def _work(self, worker: OnlineWorker, rules: Sequence[OnlineRule]) -> None:
        worker.examine(rules=rules)
        self._backfill(worker)
        for _ in range(_ROUNDS):
            if self._stop.is_set() or not worker.work_once():
                break
        for rule in rules:
            if rule.alert is None:
                continue
            try:
                check_alerts(worker.store, rule, deliver=False)
            except Exception:  # one rule's alerts never stop the others, nor the scoring
                log.exception("online rule %r: its alerts could not be checked", rule.name)
        self.alerts.wake(rules)

    def _backfill(self, worker: OnlineWorker) -> None:
        """Do the backfills asked for (``POST /api/online/rules/{name}/backfill``); one whose
        rule is gone is closed, said in the log."""
        for asked in worker.store.pending_backfills():
            if self._stop.is_set():
                return
            try:
                worker.backfill(asked.rule, asked.since, asked.until)
            except ConfigError as exc:
                log.error("online backfill of %r: %s; closed", asked.rule, exc)
                worker.store.advance_backfill(asked, asked.cursor, done=True)
