"""Committing finished samples, and stopping the run loudly when the store refuses one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from aieval._records import SampleRecord
from aieval.errors import StoreError
from aieval.store import Store
from aieval.store._owner import HEARTBEAT_EVERY_S

__all__ = ["SampleWriter", "heartbeat", "stop_heartbeat"]

log = logging.getLogger("aieval")


class SampleWriter:
    """Commits finished samples at the end of the event-loop step in which they finished.

    Samples that finish in the same step share one transaction, so storage costs a fraction of
    a commit per sample while every sample is still durable a moment after it ends. A sample
    counts (``on_stored``: summary, progress, telemetry) only once it is committed. When a
    commit fails (a full disk, an I/O error), the error is kept, the run's tasks are cancelled
    and :meth:`raise_if_failed` re-raises it, so the run stops as ``failed`` instead of
    reporting samples that were never stored.
    """

    def __init__(
        self, db: Store | None, run_id: str, on_stored: Callable[[SampleRecord], None]
    ) -> None:
        self.db = db
        self.run_id = run_id
        self.on_stored = on_stored
        self.pending: list[SampleRecord] = []
        self.error: StoreError | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def stop_on_failure(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel these tasks when a commit fails."""
        self._tasks = tasks

    def add(self, record: SampleRecord) -> None:
        if self.error is not None:
            return  # the run is stopping; this sample is not stored and runs again on resume
        if self.db is None:
            self.on_stored(record)
            return
        if not self.pending:
            asyncio.get_running_loop().call_soon(self.flush)
        self.pending.append(record)

    def flush(self) -> None:
        if self.db is None or not self.pending or self.error is not None:
            return
        batch, self.pending = self.pending, []
        try:
            self.db.record_samples(self.run_id, batch)
        except StoreError as exc:
            self._fail(exc)
            return
        except Exception as exc:  # a Store subclass or stand-in that raises its own errors
            error = StoreError(f"cannot store samples of run {self.run_id}: {exc!r}")
            error.__cause__ = exc
            self._fail(error)
            return
        for record in batch:
            self.on_stored(record)

    def _fail(self, error: StoreError) -> None:
        self.error = error
        for task in self._tasks:
            task.cancel()

    def raise_if_failed(self) -> None:
        """Re-raise the first failed commit, if any."""
        if self.error is not None:
            raise self.error


async def heartbeat(db: Store, run_id: str) -> None:
    """Refresh the run's heartbeat until cancelled, so a dead run can be told from a slow one."""
    while True:
        await asyncio.sleep(HEARTBEAT_EVERY_S)
        try:
            db.heartbeat(run_id)
        except StoreError as exc:  # a full disk fails the next sample commit loudly
            log.warning("cannot refresh the heartbeat of run %s: %s", run_id, exc)


async def stop_heartbeat(task: asyncio.Task[None] | None) -> None:
    """Cancel a :func:`heartbeat` task and wait for it to end."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
