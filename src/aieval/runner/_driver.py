"""The driver: feeds samples to an executor and stores each finished one as it comes back.

Whatever runs the samples (this process's event loop, Ray workers), this process alone writes
the store: SQLite stays single-writer, each finished sample is committed a moment after it
returns, and ``resume=`` redoes exactly what is not stored.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from itertools import islice
from typing import Any

from aieval._records import SampleRecord, redact_record
from aieval._types import Example
from aieval.datasets import Dataset
from aieval.errors import StoreError
from aieval.runner._executor import Executor, Finished, describe_error
from aieval.runner._inputs import ProgressCallback
from aieval.runner._observers import Observers
from aieval.runner._prepare import Prepared
from aieval.runner._prescore import CHUNK, Item
from aieval.runner._sample import failed_record
from aieval.runner._writer import SampleWriter, heartbeat, stop_heartbeat
from aieval.store import PlainSamples, Store

__all__ = ["drive", "finish"]

log = logging.getLogger("aieval")

#: Samples :func:`_consume_inline` takes at a time: the scorers' batch (see ``Prescorer``).
INLINE_CHUNK = CHUNK


async def drive(
    prep: Prepared,
    executor: Executor,
    work: Callable[[tuple[int, Example]], Any],
    *,
    progress: ProgressCallback | None = None,
    observers: Observers | None = None,
    redact_values: bool = False,
    feed: Callable[[Iterator[tuple[int, Example]]], Iterator[tuple[int, Example]]] | None = None,
    hold: int = 1,
    inline: Callable[[tuple[int, Example]], SampleRecord | None] | None = None,
    columnar: Callable[[list[tuple[int, Example]]], PlainSamples | None] | None = None,
) -> list[SampleRecord] | None:
    """Run every sample not stored yet through ``executor.map(work, ...)`` and store it.

    Samples count (summary, progress, observers) once committed. A failed commit stops the run
    with that :class:`StoreError`. ``redact_values``: the records come from elsewhere (Ray
    workers) and are redacted here too, with this process's secrets. ``feed``: what the
    pending samples pass through on their way to the executor (batch scoring ahead).
    ``hold``: how many samples may share a commit on SQLite (see :class:`SampleWriter`).
    ``inline``: makes a sample's record here and now when it can (a recorded sample scored by
    its scorers' batches: see :func:`_consume_inline`), else ``None`` and the sample takes
    the executor. ``columnar``: with ``inline``, makes a whole chunk's samples as columns
    when every one is plain (see :mod:`aieval.runner._columnar`), else ``None``; used only
    for a run stored in SQLite with samples held, no observers and nothing kept.

    Returns:
        Every sample sorted by index when the run has no store, else ``None``.
    """
    kept: list[SampleRecord] | None = [] if prep.db is None else None
    aggregator, total = prep.aggregator, prep.info.count * prep.spec.epochs
    done = aggregator.count

    def stored(record: SampleRecord) -> None:
        nonlocal done
        if kept is not None:
            kept.append(record)
        aggregator.add(record)
        done += 1
        if observers:
            observers.sample(record, done, total)
        if progress is not None:
            progress(done, total)

    def stored_plain(batch: PlainSamples) -> None:
        nonlocal done
        aggregator.add_plain(batch)
        if progress is None:
            done += len(batch)
            return
        for _ in range(len(batch)):
            done += 1
            progress(done, total)

    writer = SampleWriter(prep.db, prep.run_id, stored, hold=hold)
    if (
        kept is not None
        or observers
        or hold < INLINE_CHUNK
        or writer.threaded
        or not hasattr(prep.db, "record_plain")  # a stand-in store: records only
    ):
        columnar = None  # each sample is wanted on its own, or committed sooner than a chunk
    if not redact_values:  # work in this process (Ray's is shipped to its workers as it is)
        work = _stopping_on_store_errors(work, writer)
    items = _pending(prep.data, prep.done_ids, prep.spec.epochs)
    if feed is not None:
        items = feed(items)
    if inline is not None:
        plain = None if columnar is None else (columnar, stored_plain)
        job = _consume_inline(executor, work, items, writer, prep.secrets, inline, plain)
    else:
        job = _consume(executor, work, items, writer, prep.secrets, redact_values)
    consume = asyncio.ensure_future(job)
    writer.stop_on_failure([consume])
    beat = asyncio.create_task(heartbeat(prep.db, prep.run_id)) if prep.db is not None else None
    try:
        await consume
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if writer.error is None or (task is not None and task.cancelling()):
            raise
        # the writer stopped the samples: its StoreError is raised below
    finally:
        if not consume.done():
            consume.cancel()
            await asyncio.wait([consume])
        await writer.drain()
        await stop_heartbeat(beat)
    writer.raise_if_failed()
    if kept is not None:
        kept.sort(key=lambda record: record.index)
    return kept


def _stopping_on_store_errors(
    work: Callable[[tuple[int, Example]], Any], writer: SampleWriter
) -> Callable[[tuple[int, Example]], Any]:
    """``work`` that stops the run when a sample's work raises :class:`StoreError` (a write to
    the response or judge cache failed), as a failed commit does: the run fails loudly, and
    the sample, not stored, runs again on resume (never recorded as a model failure)."""

    async def guarded(item: tuple[int, Example]) -> Any:
        try:
            value = work(item)
            return await value if inspect.isawaitable(value) else value
        except StoreError as exc:
            error = StoreError(f"sample {item[1].sample_id}: {exc}")
            error.__cause__ = exc
            writer.fail(error)
            raise error from exc

    return guarded


async def _consume(
    executor: Executor,
    work: Callable[[tuple[int, Example]], Any],
    items: Iterator[tuple[int, Example]],
    writer: SampleWriter,
    secrets: frozenset[str],
    redact_values: bool,
) -> None:
    stream = executor.map(work, items)
    try:
        async for finished in stream:
            value = finished.value
            if (
                finished.error is None
                and not redact_values
                and type(value) is SampleRecord
                and value.verdict is not None
            ):
                writer.add(value)  # the common case, without a call per sample
            else:
                writer.add(_record(finished, secrets, redact_values))
            if writer.error is not None:
                return  # the run is stopping; samples in flight run again on resume
    finally:
        # end the executor's work in flight now, not when the stream is garbage-collected
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()


async def _consume_inline(
    executor: Executor,
    work: Callable[[tuple[int, Example]], Any],
    items: Iterator[tuple[int, Example]],
    writer: SampleWriter,
    secrets: frozenset[str],
    inline: Callable[[tuple[int, Example]], SampleRecord | None],
    plain: tuple[Callable[[list[Item]], PlainSamples | None], Callable[[PlainSamples], None]]
    | None = None,
) -> None:
    """:func:`_consume` for recorded samples, a chunk at a time: each sample ``inline`` can
    finish is made and handed to the writer without a task, a coroutine or a trip through the
    executor's stream (a million rows cost seconds of that alone); each run of samples it
    cannot goes through the executor as in :func:`_consume`, in its place, so samples are
    stored and counted in the order the per-sample path gives them. A failure making a sample
    is that sample's error, as the executor would record it. ``plain``: makes a chunk of
    plain samples as columns, and counts them once stored (see :func:`drive`)."""
    made, step = 0, _step(executor)
    while chunk := list(islice(items, INLINE_CHUNK)):
        batch = None if plain is None else plain[0](chunk)
        if batch is not None:
            assert plain is not None
            writer.add_plain(batch, plain[1])
            if writer.error is not None:
                return  # the run is stopping; samples not stored run again on resume
            await asyncio.sleep(0)  # the heartbeat and a cancellation get their turn
            continue
        others: list[tuple[int, Example]] = []
        for item in chunk:
            try:
                record = inline(item)
            except (KeyboardInterrupt, asyncio.CancelledError):
                raise
            except StoreError as exc:  # as _stopping_on_store_errors does
                error = StoreError(f"sample {item[1].sample_id}: {exc}")
                error.__cause__ = exc
                writer.fail(error)
                return
            except BaseException as exc:  # the sample's error, as the executor records it
                record = _record(Finished(0, item, error=describe_error(exc)), secrets, False)
            if record is None:
                others.append(item)
                continue
            if others:
                await _consume(executor, work, iter(others), writer, secrets, False)
                others = []
            writer.add(record)
            if writer.error is not None:
                return  # the run is stopping; samples not stored run again on resume
            made += 1
            if made % step == 0:
                # an event-loop step of as many samples as the executor finishes in one: the
                # writer commits them (unless it holds them), the heartbeat and a
                # cancellation get their turn
                await asyncio.sleep(0)
        if others:
            await _consume(executor, work, iter(others), writer, secrets, False)
            if writer.error is not None:
                return
        await asyncio.sleep(0)


def _step(executor: Executor) -> int:
    """How many samples the executor finishes in one event-loop step at most: those in flight
    and those its buffer holds."""
    return max(1, getattr(executor, "concurrency", 1) + getattr(executor, "buffer", 0))


def _record(
    finished: Finished[tuple[int, Example], Any], secrets: frozenset[str], redact: bool
) -> SampleRecord:
    value = finished.value
    if finished.error is None and isinstance(value, SampleRecord) and value.verdict is not None:
        record = value
    else:  # every stored sample has a verdict: one the work did not decide is a failure
        index, example = finished.item
        error = finished.error or (
            "the sample's work returned a record without a verdict"
            if isinstance(value, SampleRecord)
            else f"the sample's work returned {type(value).__name__}"
        )
        record, redact = failed_record(index, example, error), True
    if redact:
        redact_record(record, secrets)
    return record


def _pending(data: Dataset, done_ids: set[str], epochs: int = 1) -> Iterator[tuple[int, Example]]:
    """``(index, example)`` of every sample not stored yet, in dataset order.

    With ``epochs > 1`` each example comes ``epochs`` times, as ``example.epoch`` 1..N at
    indexes ``i * N .. i * N + N - 1``; a resumed run gets only the (example, epoch) pairs
    not stored yet.
    """
    if epochs > 1:
        return (
            (i * epochs + e - 1, repeat)
            for i, example in enumerate(data)
            for e in range(1, epochs + 1)
            if (repeat := replace(example, epoch=e)).sample_id not in done_ids
        )
    if not done_ids:
        return enumerate(data)
    return ((i, example) for i, example in enumerate(data) if example.id not in done_ids)


def finish(db: Store, run_id: str, status: str, summary: dict[str, Any], error: str | None) -> None:
    """Store how the run ended; a failure to do so is loud unless the run already failed."""
    try:
        db.finish_run(run_id, status=status, metrics=summary, error=error)
    except StoreError as exc:
        if status == "completed":
            raise
        # the run's own error is on its way up; the row stays "running" and, its process
        # gone, reads as interrupted, so --resume still finds it
        log.error("cannot record that run %s ended (%s): %s", run_id, status, exc)
