"""Committing finished samples, and stopping the run loudly when the store refuses one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from aieval._records import SampleRecord
from aieval.errors import StoreError, UnstorableSampleError
from aieval.runner._sample import unstorable_record
from aieval.store import HEARTBEAT_EVERY_S, Store

__all__ = ["SampleWriter", "heartbeat", "stop_heartbeat"]

log = logging.getLogger("aieval")

#: What a commit stored, and the store's failure that stopped it (if any).
_Committed = tuple[list[SampleRecord], StoreError | None]


class SampleWriter:
    """Commits finished samples at the end of the event-loop step in which they finished.

    Samples that finish in the same step share one transaction, so storage costs a fraction of
    a commit per sample while every sample is still durable a moment after it ends. On
    PostgreSQL the commit runs on a thread while the run goes on, and the samples finishing
    during it share the next one. A sample
    counts (``on_stored``: summary, progress, telemetry) only once it is committed. When a
    commit fails (a full disk, an I/O error), the error is kept, the run's tasks are cancelled
    and :meth:`raise_if_failed` re-raises it, so the run stops as ``failed`` instead of
    reporting samples that were never stored. A batch holding a sample the store cannot keep
    (an integer beyond 64 bits: :class:`UnstorableSampleError`) is no store failure: it is
    committed one sample at a time, that sample stored as its error.
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
        self._committing: asyncio.Future[_Committed] | None = None
        self._pool: ThreadPoolExecutor | None = None
        location = getattr(db, "location", None)
        # a PostgreSQL store (a location with no file) commits on a thread
        self._threaded = location is not None and getattr(location, "path", True) is None

    def stop_on_failure(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel these tasks when a commit fails."""
        self._tasks = tasks

    def add(self, record: SampleRecord) -> None:
        if self.error is not None:
            return  # the run is stopping; this sample is not stored and runs again on resume
        if self.db is None:
            self.on_stored(record)
            return
        if not self.pending and self._committing is None:
            asyncio.get_running_loop().call_soon(self.flush)
        self.pending.append(record)

    def flush(self) -> None:
        """Commit the pending samples: here and now on SQLite (a commit costs well under a
        millisecond), on a thread of its own on PostgreSQL, so the run goes on while the
        server commits (and flushes its log); samples finishing meanwhile make up the next
        batch, one commit in flight at a time."""
        if self.db is None or not self.pending or self.error is not None:
            return
        if self._committing is not None:
            return  # the commit in flight starts the next one when it ends
        batch, self.pending = self.pending, []
        if not self._threaded:
            self._stored(*self._commit(batch))
            return
        loop = asyncio.get_running_loop()
        self._committing = loop.run_in_executor(self._thread(), self._commit, batch)
        self._committing.add_done_callback(self._committed)

    def _thread(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="aieval-store")
        return self._pool

    def _committed(self, done: asyncio.Future[_Committed]) -> None:
        self._committing = None
        self._stored(*done.result())
        self.flush()

    def _commit(self, batch: list[SampleRecord]) -> _Committed:
        """Commit ``batch``: the records stored (a sample holding a value the store cannot
        keep is stored as that error instead) and the store's failure, if any."""
        try:
            self._write(batch)
        except UnstorableSampleError:
            return self._commit_each(batch)
        except StoreError as exc:
            return [], exc
        return batch, None

    def _commit_each(self, batch: list[SampleRecord]) -> _Committed:
        """One sample at a time, so that only the samples the store cannot keep fail."""
        stored: list[SampleRecord] = []
        for record in batch:
            try:
                try:
                    self._write([record])
                except UnstorableSampleError as exc:
                    record = unstorable_record(record, exc)
                    self._write([record])
            except StoreError as exc:
                return stored, exc
            stored.append(record)
        return stored, None

    def _write(self, batch: list[SampleRecord]) -> None:
        assert self.db is not None
        try:
            self.db.record_samples(self.run_id, batch)
        except StoreError:
            raise
        except Exception as exc:  # a Store subclass or stand-in that raises its own errors
            raise StoreError(f"cannot store samples of run {self.run_id}: {exc!r}") from exc

    def _stored(self, stored: list[SampleRecord], error: StoreError | None) -> None:
        for record in stored:
            self.on_stored(record)
        if error is not None:
            self.fail(error)

    async def drain(self) -> None:
        """Wait for the commit in flight, then commit what is pending (the run's end)."""
        while self._committing is not None:
            await asyncio.wait([self._committing])
            await asyncio.sleep(0)  # let the commit's callback run (it may start another)
        if self.pending and self.error is None:
            batch, self.pending = self.pending, []
            self._stored(*self._commit(batch))
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def fail(self, error: StoreError) -> None:
        """Stop the run with ``error`` (the first one kept): its tasks are cancelled and
        :meth:`raise_if_failed` raises it; samples not committed yet run again on resume."""
        if self.error is not None:
            return
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
