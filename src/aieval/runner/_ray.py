"""``RayExecutor``: per-sample work in batches on Ray workers, streamed back to the driver.

Needs the ``ray`` extra (``pip install 'aieval[ray]'``); Ray is imported only when a run uses it.

How work flows:

- items are cut into batches of ``batch_size`` (one Ray task each, so scheduling is amortised);
- at most ``max_in_flight`` batches are submitted at once; the next batch is read from the
  iterable only when one finishes, so a million-row generator never sits in the object store;
- each batch's results come back to the driver as soon as that batch finishes (completion
  order), so the driver, which owns the SQLite store, commits them while others still run;
- an exception in the function is that item's error; a worker process that dies (``os._exit``,
  a segfault, the OOM killer, a lost node) fails only its batch, whose items are then retried one
  per task, so the item that kills its worker is found and recorded as an error after
  ``max_attempts`` runs while the others complete;
- a batch running longer than ``batch_timeout`` is cancelled (its worker is killed) and its items
  run again one per task; an item that alone outlives ``batch_timeout`` is recorded as timed
  out: no run hangs on a stuck worker. The clock starts when the batch starts on its worker
  (the task first reports in), so time spent queued for a CPU or waiting for a worker process
  to start never counts: a busy cluster cannot time out a sample that never ran.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aieval.errors import ConfigError
from aieval.runner._executor import Finished, call_one, describe_error, positive

__all__ = ["INSTALL_HINT", "RayExecutor", "import_ray", "run_batch"]

log = logging.getLogger("aieval")

T = TypeVar("T")
R = TypeVar("R")

INSTALL_HINT = "the Ray executor needs the ray extra: pip install 'aieval[ray]'"

#: Object store for a local Ray started for a run: in-flight work is bounded, so it stays small.
_LOCAL_OBJECT_STORE_BYTES = 512 * 1024 * 1024


def _started_cluster_file() -> Path | None:
    """The address file ``ray start`` leaves on this machine while its cluster runs.

    Only such clusters are joined by default: Ray's own ``auto`` also finds the private Ray of
    another process (another run), which that process shuts down when it ends.
    """
    roots = {os.environ.get("RAY_TMPDIR") or "/tmp", tempfile.gettempdir()}
    for root in roots:
        file = Path(root) / "ray" / "ray_current_cluster"
        if file.is_file():
            return file
    return None


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse an address nothing listens on: ``ray.init`` would retry it for many minutes."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"ray_address: {address!r} is not 'host:port', 'ray://host:port', 'auto' or 'local'"
        )
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(_unreachable(address, str(exc))) from None


def _unreachable(address: str, reason: str) -> str:
    return (
        f"ray_address: no Ray cluster answers at {address!r} ({reason}); start one with "
        "'ray start --head', or leave ray_address unset to start a local Ray"
    )


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` saying which extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(INSTALL_HINT) from exc
    return ray


def run_batch(
    fn: Callable[[Any], Any], batch: list[tuple[int, Any]]
) -> list[tuple[int, Any, str | None]]:
    """Run ``fn`` on a batch inside a worker: ``(index, value, error)`` per item.

    Async functions of one batch overlap on the worker's own event loop, which lives as long
    as the worker process: what a function keeps between batches (a provider's connections,
    its rate limiter) stays bound to one loop.
    """

    async def run_all() -> list[Finished[Any, Any]]:
        return list(await asyncio.gather(*(call_one(fn, index, item) for index, item in batch)))

    finished = _worker_loop().run_until_complete(run_all())
    return [(done.index, done.value, done.error) for done in finished]


_loop: asyncio.AbstractEventLoop | None = None


def _run_batch_reporting_start(
    fn: Callable[[Any], Any], batch: list[tuple[int, Any]]
) -> Iterator[list[tuple[int, Any, str | None]] | None]:
    """A Ray generator task: ``None`` once the batch runs on a worker, then its results."""
    yield None
    yield run_batch(fn, batch)


class _BatchTimedOut(Exception):
    """A batch ran past ``batch_timeout`` on its worker and was cancelled."""


def _worker_loop() -> asyncio.AbstractEventLoop:
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop


@dataclass
class _Batch:
    items: list[tuple[int, Any]]
    attempts: int = 1
    timed_out: bool = False


#: Batches in flight: the task following each Ray task -> (its ObjectRefGenerator, the batch).
_Running = dict[asyncio.Future[Any], tuple[Any, _Batch]]


class RayExecutor:
    """Runs the function on Ray workers, in batches, with bounded work in flight.

    Args:
        address: the cluster to use: ``"ray://host:10001"``, ``"host:6379"``, ``"auto"`` (a
            cluster started with ``ray start`` on this machine), or ``"local"`` (always start a
            private one). Unset: ``$RAY_ADDRESS`` if set, else the cluster ``ray start``
            runs on this machine if there is one, else a local Ray started for this run and
            shut down after it. An already initialised Ray in this process is used as it is
            and left running.
        batch_size: items per Ray task.
        max_in_flight: batches submitted at once (default: twice the cluster's CPUs).
        num_cpus: CPUs of a local Ray started for the run (default: all of this machine's).
        max_attempts: runs of an item whose worker died before it is recorded as an error.
        batch_timeout: seconds a batch may run on its worker (counted from when it starts
            there, not while it waits for a CPU or a worker process) before it is cancelled;
            its items then run one per task, and one that alone takes longer is recorded as
            timed out (``None``: no limit).
        init_options: extra keyword arguments for ``ray.init`` (``runtime_env``, ...).

    The function and the items are shipped with Ray's serialiser (cloudpickle): a function
    defined in an importable module is sent by reference, so workers need the same code. A
    function with a ``for_batches(n)`` method is replaced by what it returns for the number
    of batches that may be in flight (the runner shares a run's concurrency out this way).
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        batch_size: int = 64,
        max_in_flight: int | None = None,
        num_cpus: int | None = None,
        max_attempts: int = 2,
        batch_timeout: float | None = None,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        self.address = address
        self.batch_size = positive(batch_size, "batch_size")
        self.max_in_flight = (
            None if max_in_flight is None else positive(max_in_flight, "max_in_flight")
        )
        self.num_cpus = None if num_cpus is None else positive(num_cpus, "num_cpus")
        self.max_attempts = positive(max_attempts, "max_attempts")
        if batch_timeout is not None and not batch_timeout > 0:
            raise ConfigError(f"batch_timeout must be a positive number, got {batch_timeout!r}")
        self.batch_timeout = batch_timeout
        self.init_options = dict(init_options or {})
        #: The most items that were submitted and not yet yielded during the last :meth:`map`.
        self.peak_in_flight = 0
        #: Batches whose worker died during the last :meth:`map` (each was retried per item).
        self.crashed_batches = 0

    async def map(
        self, fn: Callable[[T], R | Awaitable[R]], items: Iterable[T]
    ) -> AsyncIterator[Finished[T, R]]:
        """Run ``fn`` on every item on Ray workers, yielding results in completion order."""
        ray = import_ray()
        owned = self._connect(ray)
        try:
            stream: AsyncIterator[Finished[T, R]] = self._stream(ray, fn, enumerate(items))
            async for finished in stream:
                yield finished
        finally:
            if owned:
                ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        """Connect to (or start) Ray; ``True`` when this executor must shut it down after."""
        if ray.is_initialized():
            return False
        options: dict[str, Any] = {"include_dashboard": False, **self.init_options}
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        if address is None:
            address = "auto" if _started_cluster_file() is not None else "local"
            if address == "auto":
                try:
                    ray.init(address="auto", **options)
                    return True
                except ConnectionError:
                    log.warning("the Ray cluster of 'ray start' is gone; starting a local Ray")
                    address = "local"
        if address == "local":
            options.setdefault("object_store_memory", _LOCAL_OBJECT_STORE_BYTES)
            ray.init(address="local", num_cpus=self.num_cpus, **options)
            return True
        _check_reachable(address)
        try:
            ray.init(address=address, **options)
        except ConnectionError as exc:
            raise ConfigError(_unreachable(address, str(exc))) from None
        return True

    async def _stream(
        self, ray: Any, fn: Callable[[T], Any], source: Iterator[tuple[int, T]]
    ) -> AsyncIterator[Finished[T, R]]:
        remote = ray.remote(_run_batch_reporting_start).options(max_retries=0)
        bound = self.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        share = getattr(fn, "for_batches", None)
        if callable(share):  # a function that divides a budget (the run's concurrency)
            fn = share(bound)
        fn_ref = ray.put(fn)
        retry: deque[_Batch] = deque()
        running: _Running = {}
        self.peak_in_flight = self.crashed_batches = 0
        try:
            while True:
                while len(running) < bound and (batch := self._next_batch(retry, source)):
                    stream = remote.remote(fn_ref, batch.items)
                    follower = asyncio.ensure_future(self._follow(ray, stream, batch))
                    running[follower] = (stream, batch)
                if not running:
                    return
                in_flight = sum(len(b.items) for _, b in running.values())
                self.peak_in_flight = max(self.peak_in_flight, in_flight)
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    _, batch = running.pop(future)
                    for finished in self._outcomes(ray, future, batch, retry):
                        yield finished
        finally:
            for future, (stream, _) in running.items():
                future.cancel()
                ray.cancel(stream, force=True)

    async def _follow(self, ray: Any, stream: Any, batch: _Batch) -> Any:
        """The batch's results; its ``batch_timeout`` counts from its start on a worker."""
        started = await stream.__anext__()
        await started  # raises when the task failed before running (e.g. unloadable arguments)
        results = asyncio.ensure_future(self._result(stream))
        try:
            return await asyncio.wait_for(results, self.batch_timeout)
        except TimeoutError:
            batch.timed_out = True
            ray.cancel(stream, force=True)
            raise _BatchTimedOut from None

    @staticmethod
    async def _result(stream: Any) -> Any:
        return await (await stream.__anext__())

    def _next_batch(self, retry: deque[_Batch], source: Iterator[tuple[int, Any]]) -> _Batch | None:
        if retry:
            return retry.popleft()
        items = [item for _, item in zip(range(self.batch_size), source, strict=False)]
        return _Batch(items) if items else None

    def _outcomes(
        self, ray: Any, future: asyncio.Future[Any], batch: _Batch, retry: deque[_Batch]
    ) -> list[Finished[Any, Any]]:
        """The batch's results, or its items' errors, or nothing when they were re-queued."""
        items = dict(batch.items)
        try:
            results = future.result()
        except ray.exceptions.RayTaskError as exc:
            # The batch runner itself failed (e.g. the function could not be unpickled there).
            return _fail(batch, describe_error(exc.cause if exc.cause is not None else exc))
        except (ray.exceptions.RayError, _BatchTimedOut) as exc:
            return self._crashed(batch, exc, retry)
        return [
            Finished(index, items[index], value, error, batch.attempts)
            for index, value, error in results
        ]

    def _crashed(
        self, batch: _Batch, exc: BaseException, retry: deque[_Batch]
    ) -> list[Finished[Any, Any]]:
        """A dead worker: split the batch into single items, or record the error."""
        if batch.timed_out:
            if len(batch.items) > 1:
                # One slow item must not cost its batch mates: each gets a run of its own.
                retry.extend(_Batch([pair], batch.attempts + 1) for pair in batch.items)
                return []
            limit = f"batch_timeout={self.batch_timeout}s"
            return _fail(batch, f"TimeoutError: the sample ran longer than {limit}")
        self.crashed_batches += 1
        if batch.attempts < self.max_attempts:
            retry.extend(_Batch([pair], batch.attempts + 1) for pair in batch.items)
            return []
        if len(batch.items) > 1:
            # Out of attempts as a group: give each item one run of its own to find the culprit.
            retry.extend(_Batch([pair], batch.attempts) for pair in batch.items)
            return []
        summary = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        error = (
            f"WorkerCrashedError: the worker process died while running this sample "
            f"({batch.attempts} attempts): {type(exc).__name__}"
            + (f": {summary}" if summary else "")
        )
        return _fail(batch, error)


def _fail(batch: _Batch, error: str) -> list[Finished[Any, Any]]:
    """The same recorded error for every item of a batch."""
    return [Finished(i, item, error=error, attempts=batch.attempts) for i, item in batch.items]
