"""The Ray task of one batch, and how its items and results cross to and from it.

Items travel to the task pickled one by one, and results come back the same way, so one that
cannot be pickled (or unpickled) is that item's error, never its batch's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

from aieval.runner._batching import Batch
from aieval.runner._executor import Finished, call_one, describe_error
from aieval.runner._shipping import dumps, loads, refusal

__all__ = ["Packed", "batch_task", "pack_items", "run_batch", "unpack"]

#: One item or one result as it travels: its index, its pickle (or ``None``), its error.
Packed = tuple[int, bytes | None, str | None]


def run_batch(
    fn: Callable[[Any], Any], batch: list[tuple[int, Any]]
) -> list[tuple[int, Any, str | None]]:
    """Run ``fn`` on a batch inside a worker: ``(index, value, error)`` per item.

    Async functions of one batch overlap on the worker's own event loop, which lives as long
    as the worker process: what a function keeps between batches (a provider's connections,
    its rate limiter) stays bound to one loop.
    """

    async def run_all() -> list[Finished[Any, Any]]:
        return list(await asyncio.gather(*(_call_item(fn, index, item) for index, item in batch)))

    finished = _worker_loop().run_until_complete(run_all())
    return [(done.index, done.value, done.error) for done in finished]


async def _call_item(fn: Callable[[Any], Any], index: int, item: Any) -> Finished[Any, Any]:
    """``call_one``, and a user's own ``BaseException`` (or ``GeneratorExit``) is that item's
    error too, as on the local executor: raised through ``gather`` it failed the whole batch."""
    try:
        return await call_one(fn, index, item)
    except KeyboardInterrupt:
        raise
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise
        return Finished(index, item, error="CancelledError: cancelled")
    except BaseException as exc:
        return Finished(index, item, error=describe_error(exc))


def batch_task(
    fn: Callable[[Any], Any], packed: list[tuple[int, bytes]]
) -> Iterator[tuple[float, list[Packed]] | None]:
    """The Ray task of one batch: ``None`` as soon as it runs (its start signal), then the
    seconds the batch took and its results, each pickled on its own.

    Ray has loaded the function and the items before the body starts, so the driver's
    ``batch_timeout`` counts neither a wait for a free worker nor a worker's start-up. An item
    that cannot be unpickled here, or a result that cannot be pickled, is that item's error.
    """
    yield None
    started = time.perf_counter()
    items: list[tuple[int, Any]] = []
    failed: list[Packed] = []
    for index, data in packed:
        try:
            items.append((index, loads(data)))
        except Exception as exc:
            error = f"the sample cannot be unpickled on its Ray worker: {describe_error(exc)}"
            failed.append((index, None, error[:_ERROR_CHARS]))
    results = [_pack_result(*result) for result in run_batch(fn, items)]
    yield time.perf_counter() - started, results + failed


#: Characters of an error message this module writes around an exception's own text.
_ERROR_CHARS = 2000


def _pack_result(index: int, value: Any, error: str | None) -> Packed:
    """One result pickled on its own: one that cannot be is that item's error alone."""
    if error is not None:
        return index, None, error
    try:
        return index, dumps(value), None
    except Exception as exc:
        return (
            index,
            None,
            f"the result cannot be sent back from its Ray worker: {refusal(value, exc)}",
        )


def pack_items(batch: Batch) -> tuple[Batch, list[tuple[int, bytes]], list[Finished[Any, Any]]]:
    """The batch's items pickled one by one: the batch of those that pickled, their pickles,
    and the error of each that did not (it is never sent)."""
    packed: list[tuple[int, bytes]] = []
    kept: list[tuple[int, Any]] = []
    refused: list[Finished[Any, Any]] = []
    for index, item in batch.items:
        try:
            packed.append((index, dumps(item)))
            kept.append((index, item))
        except Exception as exc:
            error = f"the sample cannot be sent to a Ray worker: {refusal(item, exc)}"
            refused.append(Finished(index, item, error=error, attempts=batch.attempts))
    if len(kept) < len(batch.items):
        batch = Batch(kept, batch.attempts)
    return batch, packed, refused


def unpack(
    index: int, item: Any, data: bytes | None, error: str | None, attempts: int
) -> Finished[Any, Any]:
    """A worker's result for one item, unpickled here (a failure to is that item's error)."""
    if error is not None or data is None:
        return Finished(index, item, None, error or "the worker sent no result", attempts)
    try:
        return Finished(index, item, loads(data), None, attempts)
    except Exception as exc:
        error = f"the result cannot be unpickled on the driver: {describe_error(exc)}"
        return Finished(index, item, None, error[:_ERROR_CHARS], attempts)


_loop: asyncio.AbstractEventLoop | None = None


def _worker_loop() -> asyncio.AbstractEventLoop:
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop
