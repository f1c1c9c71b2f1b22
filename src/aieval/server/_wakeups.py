"""Wake event streams on the server loop when a run in a worker thread stores a change."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from aieval.core import RunFinish, RunStart, SampleRecord

__all__ = ["LiveUpdates", "Wakeups"]


class Wakeups:
    """Per-run events that worker threads set (thread-safe) and streams await."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    @contextmanager
    def subscribe(self, run_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever ``run_id`` changes, for as long as the block runs."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiting.setdefault(run_id, set()).add(entry)
        try:
            yield entry[1]
        finally:
            with self._lock:
                waiting = self._waiting.get(run_id, set())
                waiting.discard(entry)
                if not waiting:
                    self._waiting.pop(run_id, None)

    def notify(self, run_id: str) -> None:
        """Wake every stream following ``run_id`` (callable from any thread)."""
        with self._lock:
            entries = list(self._waiting.get(run_id, ()))
        for loop, event in entries:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)


class LiveUpdates:
    """The run observer of evaluations the server starts: each stored change wakes the run's
    event streams (the streams read what changed from the store)."""

    def __init__(self, wakeups: Wakeups) -> None:
        self._wakeups = wakeups

    def on_start(self, run: RunStart) -> None:
        """The run's row is stored (created or resumed): wake its streams."""
        self._wakeups.notify(run.id)

    def on_sample(self, run: RunStart, sample: SampleRecord, done: int, total: int) -> None:
        """A sample is stored: wake the run's streams."""
        self._wakeups.notify(run.id)

    def on_finish(self, run: RunStart, end: RunFinish) -> None:
        """The run's end is stored: wake its streams."""
        self._wakeups.notify(run.id)
