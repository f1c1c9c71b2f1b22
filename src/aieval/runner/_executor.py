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
    the runner's scorers do today. Items are pulled from the iterable only when a slot frees.

    Example:
        >>> import asyncio
        >>> async def squares():
        ...     return sorted([f.value async for f in LocalExecutor(2).map(lambda x: x * x,
        ...                                                              range(4))])
        >>> asyncio.run(squares())
        [0, 1, 4, 9]
    """

    def __init__(self, concurrency: int = 16) -> None:
        self.concurrency = positive(concurrency, "concurrency")
        #: The most items that were in flight at once during the last :meth:`map`.
        self.peak_in_flight = 0

    async def map(
        self, fn: Callable[[T], R | Awaitable[R]], items: Iterable[T]
    ) -> AsyncIterator[Finished[T, R]]:
        """Run ``fn`` on every item, yielding results in completion order."""
        source: Iterator[tuple[int, T]] = enumerate(items)
        running: set[asyncio.Task[Finished[T, R]]] = set()
        self.peak_in_flight = 0
        try:
            while True:
                while len(running) < self.concurrency:
                    nxt = next(source, None)
                    if nxt is None:
                        break
                    running.add(asyncio.ensure_future(call_one(fn, *nxt)))
                if not running:
                    return
                self.peak_in_flight = max(self.peak_in_flight, len(running))
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    yield task.result()
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
