"""Committing finished samples, and stopping the run loudly when the store refuses one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from aieval._records import SampleRecord
from aieval.errors import StoreError, UnstorableSampleError
from aieval.runner._sample import unstorable_record
from aieval.store import HEARTBEAT_EVERY_S, PlainSamples, Store

__all__ = ["HOLD_FROM", "HOLD_S", "RECORDED_HOLD", "SampleWriter", "heartbeat", "stop_heartbeat"]

log = logging.getLogger("aieval")

#: The longest a held sample waits for its commit (see ``SampleWriter``'s ``hold``).
HOLD_S = 0.5

#: How many samples of a run of recorded predictions on SQLite share a commit: thousands
#: finish a second, so a commit per event-loop step (up to 32) costs a fifth of the run; a
#: killed run loses at most this many (or :data:`HOLD_S` seconds' worth), which a resumed run
#: runs again.
RECORDED_HOLD = 512

#: The fewest samples a run of recorded predictions has for its commits to be held: below it
#: a run commits each event-loop step, as any other run (a commit's cost matters only at scale).
HOLD_FROM = 5_000

#: What a commit stored, and the store's failure that stopped it (if any).
_Committed = tuple[list[SampleRecord], StoreError | None]


class SampleWriter:
    """Commits finished samples at the end of the event-loop step in which they finished.

    Samples that finish in the same step share one transaction, so storage costs a fraction of
    a commit per sample while every sample is still durable a moment after it ends. On
    PostgreSQL the commit runs on a thread while the run goes on, and the samples finishing
    during it share the next one; so does a chunk of plain samples' commit on SQLite
    (:meth:`add_plain`). A sample
    counts (``on_stored``: summary, progress, telemetry) only once it is committed. When a
    commit fails (a full disk, an I/O error), the error is kept, the run's tasks are cancelled
    and :meth:`raise_if_failed` re-raises it, so the run stops as ``failed`` instead of
    reporting samples that were never stored. A batch holding a sample the store cannot keep
    (an integer beyond 64 bits: :class:`UnstorableSampleError`) is no store failure: it is
    committed one sample at a time, that sample stored as its error.

    ``hold`` > 1 (SQLite only: a run of recorded predictions) holds finished samples until
    that many wait or the first has waited :data:`HOLD_S` seconds, then commits them as one
    transaction.
    """

    def __init__(
        self,
        db: Store | None,
        run_id: str,
        on_stored: Callable[[SampleRecord], None],
        *,
        hold: int = 1,
    ) -> None:
        self.db = db
        self.run_id = run_id
        self.on_stored = on_stored
        self.pending: list[SampleRecord] = []
        self._timer: asyncio.TimerHandle | None = None
        self.error: StoreError | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._committing: asyncio.Future[_Committed] | None = None
        self._pool: ThreadPoolExecutor | None = None
        #: the plain batch being committed on the thread, with its ``on_stored``
        self._plain: (
            tuple[Future[_Committed | None], PlainSamples, Callable[[PlainSamples], None]] | None
        ) = None
        location = getattr(db, "location", None)
        # a PostgreSQL store (a location with no file) commits on a thread
        self._threaded = location is not None and getattr(location, "path", True) is None
        # SQLite, asked to hold samples: commit every ``hold`` samples or HOLD_S seconds
        self._hold = 1 if self._threaded else max(1, hold)

    @property
    def threaded(self) -> bool:
        """Whether commits of samples made one by one run on a thread (PostgreSQL)."""
        return self._threaded

    def stop_on_failure(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel these tasks when a commit fails."""
        self._tasks = tasks

    def add(self, record: SampleRecord) -> None:
        if self.error is not None:
            return  # the run is stopping; this sample is not stored and runs again on resume
        if self.db is None:
            self.on_stored(record)
            return
        if self._hold > 1:
            self.pending.append(record)
            if len(self.pending) >= self._hold:
                self.flush()
            elif self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(HOLD_S, self.flush)
            return
        if not self.pending and self._committing is None:
            asyncio.get_running_loop().call_soon(self.flush)
        self.pending.append(record)

    def add_plain(self, batch: PlainSamples, on_stored: Callable[[PlainSamples], None]) -> None:
        """Commit a batch of plain samples given as columns (SQLite, samples held: see
        :class:`~aieval.store.PlainSamples`) in a transaction of its own, after the samples
        given before it, and count them (``on_stored``) once committed.

        The commit runs on the writer's thread while the run makes the next batch (SQLite
        inserts a statement's rows with the interpreter free: see ``SqliteBackend.insert_rows``),
        one batch in flight: the batch before it is waited for (and counted) first."""
        if self.error is not None:
            return  # the run is stopping; these samples are not stored and run again on resume
        assert self.db is not None and not self._threaded
        self.flush()  # the samples before it first: stored in the order they were given
        if self.error is not None:
            return
        future = self._thread().submit(self._commit_plain, batch)
        self._plain = (future, batch, on_stored)

    def _commit_plain(self, batch: PlainSamples) -> _Committed | None:
        """Commit a plain batch (on the writer's thread): ``None`` when all of it was stored,
        else what :meth:`_commit` tells (a batch holding a value the store cannot keep is
        committed one sample at a time)."""
        assert self.db is not None
        try:
            self.db.record_plain(self.run_id, batch)
        except UnstorableSampleError:
            return self._commit_each(batch.records())
        except StoreError as exc:
            return [], exc
        except Exception as exc:  # a Store subclass or stand-in that raises its own errors
            return [], StoreError(f"cannot store samples of run {self.run_id}: {exc!r}")
        return None

    def _plain_committed(self) -> None:
        """Wait for the plain batch in flight, if any, and count what it stored."""
        if self._plain is None:
            return
        future, batch, on_stored = self._plain
        self._plain = None
        outcome = future.result()
        if outcome is None:
            on_stored(batch)
        else:
            self._stored(*outcome)

    def flush(self) -> None:
        """Commit the pending samples: here and now on SQLite (a commit costs well under a
        millisecond), on a thread of its own on PostgreSQL, so the run goes on while the
        server commits (and flushes its log); samples finishing meanwhile make up the next
        batch, one commit in flight at a time."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._plain_committed()  # a plain batch given before these samples: stored first
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
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._plain_committed()
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
