"""Wake event streams on the server loop when a worker thread writes to the store."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from aieval._records import SampleRecord
from aieval.store import Store

__all__ = ["NotifyingStore", "Wakeups"]


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


class NotifyingStore(Store):
    """The store evaluations write through: each committed change wakes the run's streams."""

    def __init__(self, path: Any, wakeups: Wakeups) -> None:
        super().__init__(path)
        self._wakeups = wakeups

    def create_run(self, **kwargs: Any) -> str:
        run_id = super().create_run(**kwargs)
        self._wakeups.notify(run_id)
        return run_id

    def mark_running(self, run_id: str) -> None:
        super().mark_running(run_id)
        self._wakeups.notify(run_id)

    def record_samples(self, run_id: str, samples: list[SampleRecord]) -> None:
        super().record_samples(run_id, samples)
        self._wakeups.notify(run_id)

    def finish_run(
        self,
        run_id: str,
        *,
        status: str,
        metrics: Mapping[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        super().finish_run(run_id, status=status, metrics=metrics, error=error)
        self._wakeups.notify(run_id)
