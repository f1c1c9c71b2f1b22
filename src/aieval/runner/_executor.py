"""The executor seam: turn a stream of items and a per-item function into finished results.

An executor decides *where* per-sample work runs; the driver that consumes its stream decides
what happens to each result (the runner stores it, counts it and reports progress). Two
implementations share one contract:

- :class:`LocalExecutor`: bounded asyncio concurrency in this process (the runner's loop).
- :class:`~aieval.runner.RayExecutor`: batches of items on Ray workers, bounded in flight.

The contract, for every executor:

- items are pulled from the iterable lazily, so a million-row generator is never held at once;
- each item yields exactly one :class:`Finished` (its value, or the error that stopped it), in
  completion order; an exception in the function never ends the stream or loses other results;
- ``Finished.index`` is the item's position in the input stream, so a driver can restore order.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from aieval.errors import ConfigError

__all__ = ["Executor", "Finished", "LocalExecutor", "SampleFunction"]

T = TypeVar("T")
R = TypeVar("R")

#: The per-item work: ``(item) -> result``, sync or async. An exception it raises becomes that
#: item's :attr:`Finished.error`.
SampleFunction = Callable[[T], "R | Awaitable[R]"]


@dataclass(frozen=True)
class Finished(Generic[T, R]):
    """One item's outcome.

    Attributes:
        index: the item's 0-based position in the input stream.
        item: the item itself.
        value: the function's result, or ``None`` when it failed.
        error: ``"ExceptionType: message"`` when the function raised or its worker died.
        attempts: how many times the item was run (more than 1 after a worker crash).
    """

    index: int
    item: T
    value: R | None = None
    error: str | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        """Whether the function returned a value."""
        return self.error is None


class Executor(Protocol):
    """Where per-sample work runs: local asyncio tasks, or Ray workers."""

    def map(
        self, fn: Callable[[Any], Any], items: Iterable[Any]
    ) -> AsyncIterator[Finished[Any, Any]]:
        """Run ``fn`` on every item, yielding each :class:`Finished` as soon as it is done."""
        ...


def describe_error(exc: BaseException) -> str:
    """The ``"Type: message"`` text recorded for an item whose function raised."""
    return f"{type(exc).__name__}: {exc}"


def positive(value: int, field: str) -> int:
    """``value`` if it is a positive integer, else a :class:`ConfigError` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{field} must be a positive integer, got {value!r}")
    return value


async def call_one(fn: Callable[[T], Any], index: int, item: T) -> Finished[T, Any]:
    """Run ``fn(item)`` (awaiting it if it is async), catching what it raises."""
    try:
        value = fn(item)
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        return Finished(index, item, error=describe_error(exc))
    return Finished(index, item, value)


class LocalExecutor:
    """Runs the function in this process with at most ``concurrency`` items in flight.

    Async functions overlap (model calls); a sync function runs inline on the event loop, as
    the runner's scorers do. An item is pulled from the iterable only when a slot frees, and
    a slot frees only when its result has been taken from the stream, so items pulled and not
    yet yielded never exceed ``concurrency + buffer``, of which at most ``concurrency`` run.

    Example:
        >>> import asyncio
        >>> async def squares():
        ...     return sorted([f.value async for f in LocalExecutor(2).map(lambda x: x * x,
        ...                                                              range(4))])
        >>> asyncio.run(squares())
        [0, 1, 4, 9]
    """

    def __init__(self, concurrency: int = 16, *, buffer: int = 0) -> None:
        self.concurrency = positive(concurrency, "concurrency")
        if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 0:
            raise ConfigError(f"buffer must be a non-negative integer, got {buffer!r}")
        #: Finished results that may wait to be taken, beyond the items in flight: a consumer
        #: that handles results in groups (the runner commits each event-loop step's samples
        #: in one transaction) gets bigger groups.
        self.buffer = buffer
        #: The most items that were in flight at once during the last :meth:`map`.
        self.peak_in_flight = 0
        self._running = 0

    async def map(
        self, fn: Callable[[T], R | Awaitable[R]], items: Iterable[T]
    ) -> AsyncIterator[Finished[T, R]]:
        """Run ``fn`` on every item, yielding results in completion order."""
        source: Iterator[tuple[int, T]] = enumerate(items)
        channel = _Channel(self.concurrency + self.buffer)
        self.peak_in_flight = self._running = 0
        workers = [
            asyncio.ensure_future(self._work(fn, source, channel)) for _ in range(self.concurrency)
        ]
        try:
            ended = 0
            ready, waiting = channel.ready, channel.waiting
            while ended < len(workers):
                got = ready.popleft() if ready else await channel.get()
                if type(got) is Finished:
                    if waiting:
                        channel.give_slot()
                    else:  # the common case, inlined
                        channel.free += 1
                    yield got
                elif got is _END:
                    ended += 1
                else:
                    raise got.error
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _work(
        self, fn: Callable[[T], Any], source: Iterator[tuple[int, T]], channel: _Channel
    ) -> None:
        """Take a slot, pull the next item, run it, hand the result over; until the end."""
        task = asyncio.current_task()
        while True:
            if task is not None and task.cancelling():
                # a call that finished as it was cancelled can swallow the cancellation
                # (asyncio.wait_for before Python 3.12): stop all the same
                raise asyncio.CancelledError
            if channel.free > 0:  # the common case, without a coroutine per item
                channel.free -= 1
            else:
                await channel.take_slot()
            try:
                pulled = next(source, None)
            except Exception as exc:  # the iterable itself failed: the stream fails with it
                channel.put(_Broken(exc))
                return
            if pulled is None:
                channel.give_slot()
                channel.put(_END)
                return
            self._running += 1
            if self._running > self.peak_in_flight:
                self.peak_in_flight = self._running
            index, item = pulled
            try:  # call_one(), inlined: this loop is the runner's per-sample path
                value = fn(item)
                if inspect.isawaitable(value):
                    value = await value
                finished: Finished[T, Any] = Finished(index, item, value)
            except Exception as exc:
                finished = Finished(index, item, error=describe_error(exc))
            except asyncio.CancelledError:
                if task is None or task.cancelling():
                    raise
                # the function cancelled something of its own: that item's error, not ours
                finished = Finished(index, item, error="CancelledError: cancelled")
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # GeneratorExit, a user's own BaseException: still
                # that item's error; a worker that died of it would leave the stream waiting
                finished = Finished(index, item, error=describe_error(exc))
            finally:
                self._running -= 1
            channel.put(finished)


class _Channel:
    """Results from the workers to the stream, and the slots that bound the work in flight.

    A worker takes a slot before it pulls an item; the stream gives the slot back when it
    hands that item's result on. (A semaphore and a queue, cut to what this loop needs: they
    cost a few microseconds per item that the runner's per-sample budget cannot spare.)
    """

    __slots__ = ("free", "reader", "ready", "waiting")

    def __init__(self, slots: int) -> None:
        self.free = slots
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.ready: deque[Any] = deque()
        self.reader: asyncio.Future[None] | None = None

    async def take_slot(self) -> None:
        if self.free > 0:
            self.free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.give_slot()  # handed over as this worker was cancelled: pass it on
            raise

    def give_slot(self) -> None:
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.free += 1

    def put(self, item: Any) -> None:
        self.ready.append(item)
        reader = self.reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    async def get(self) -> Any:
        while not self.ready:
            self.reader = asyncio.get_running_loop().create_future()
            await self.reader
        return self.ready.popleft()


#: A worker ran out of items.
_END = object()


@dataclass(frozen=True, slots=True)
class _Broken:
    """The iterable raised while a worker pulled from it."""

    error: Exception
