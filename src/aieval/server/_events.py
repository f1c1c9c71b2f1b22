"""The event stream of one run, derived from the store so every reconnect sees the same ids.

Ids: ``run_started`` is 0; the k-th stored sample (in insertion order, from 1) gives
``sample_completed`` 2k-1 and ``progress`` 2k; the final event (``run_completed`` or
``error``) is 2N+1 for a run of N stored samples. A client resuming after id ``n`` gets
exactly the events with larger ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from aieval.errors import RunNotFoundError
from aieval.server._manager import RunManager
from aieval.server._reports import report_bundle, run_header
from aieval.server._views import sample_completed
from aieval.server._wakeups import Wakeups
from aieval.store import RunRow, Store

__all__ = ["Event", "run_events"]

# Streams also re-read the store this often, for runs another process is writing.
_POLL_S = 1.0
_BATCH = 200


@dataclass(frozen=True, slots=True)
class Event:
    """One server-sent event."""

    id: int
    event: str
    data: dict[str, Any]

    def as_sse(self, redact: Callable[[Any], Any]) -> dict[str, Any]:
        """The mapping ``EventSourceResponse`` sends, with secrets removed."""
        return {"id": str(self.id), "event": self.event, "data": json.dumps(redact(self.data))}


async def run_events(
    store: Store, manager: RunManager, wakeups: Wakeups, run_id: str, last_id: int | None
) -> AsyncIterator[Event]:
    """Every event of ``run_id`` after ``last_id`` (all when ``None``), live until it ends."""
    with wakeups.subscribe(run_id) as changed:
        run = await _wait_for_row(store, manager, run_id, changed)
        if run is None:
            state = manager.state(run_id)
            message = state.error if state is not None and state.error else "the run did not start"
            if last_id is None:
                yield Event(0, "error", {"message": message, "run_id": run_id})
            return
        async for event in _follow(store, run, changed, last_id):
            yield event


async def _wait_for_row(
    store: Store, manager: RunManager, run_id: str, changed: asyncio.Event
) -> RunRow | None:
    """The run's row once the store has it; ``None`` when a queued run failed before that."""
    while True:
        changed.clear()
        # read the state first: a run that finished after this read has its row by then
        state = manager.state(run_id)
        status = state.status if state is not None else "finished"
        try:
            return await asyncio.to_thread(_exact_run, store, run_id)
        except RunNotFoundError:
            if status == "finished":
                return None
        await _wait(changed)


async def _follow(
    store: Store, run: RunRow, changed: asyncio.Event, last_id: int | None
) -> AsyncIterator[Event]:
    position = 0
    if last_id is not None and last_id < 0:
        last_id = None
    if last_id is None:
        yield Event(0, "run_started", _started(run))
    else:
        position = (last_id + 1) // 2
    total = run.n_examples
    seen, passed = await asyncio.to_thread(store.pass_counts, run.id, position)
    invalid = await asyncio.to_thread(store.invalid_count, run.id, position)
    if seen < position:  # past the stored samples: the client saw the final event
        if run.status != "running":
            return
        position = seen
    elif last_id is not None and last_id % 2 == 1:  # saw a sample's event, not its progress
        yield _progress(position, total, passed, invalid)
    while True:
        changed.clear()
        # status before samples: a finished run has stored every sample before finishing
        current = await asyncio.to_thread(_exact_run, store, run.id)
        new = await asyncio.to_thread(store.samples_since, run.id, position, limit=_BATCH)
        for record in new:
            position += 1
            passed += record.passed is True
            invalid += record.verdict is not None and record.verdict.invalid
            yield Event(2 * position - 1, "sample_completed", sample_completed(record))
            yield _progress(position, total, passed, invalid)
        if len(new) == _BATCH:
            continue
        if current.status != "running":
            final = await asyncio.to_thread(_final, store, current, position)
            if last_id is None or final.id > last_id:
                yield final
            return
        await _wait(changed)


def _started(run: RunRow) -> dict[str, Any]:
    """The header as it was when the run started, so a replay sends the same payload."""
    return {**run_header(run), "status": "running", "finished_at": None, "duration_s": None}


def _progress(done: int, total: int | None, passed: int, invalid: int) -> Event:
    """The counters so far: an invalid sample (its simulated user failed fidelity) neither
    passed nor failed, and is counted apart (``invalid``, present when some are)."""
    data: dict[str, Any] = {
        "done": done,
        "total": total,
        "passed": passed,
        "failed": done - passed - invalid,
    }
    if invalid:  # only a run with invalid conversations has the counter
        data["invalid"] = invalid
    return Event(2 * done, "progress", data)


def _final(store: Store, run: RunRow, samples: int) -> Event:
    if run.status == "completed":
        return Event(2 * samples + 1, "run_completed", report_bundle(store, run.id))
    message = run.error or f"the run ended with status {run.status}"
    return Event(
        2 * samples + 1, "error", {"message": message, "status": run.status, "run_id": run.id}
    )


def _exact_run(store: Store, run_id: str) -> RunRow:
    run = store.get_run(run_id)
    if run.id != run_id:  # get_run also matches names and prefixes
        raise RunNotFoundError(f"no run with id {run_id!r}")
    return run


async def _wait(changed: asyncio.Event) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(changed.wait(), _POLL_S)
