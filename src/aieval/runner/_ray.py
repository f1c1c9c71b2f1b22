"""``RayExecutor``: per-sample work in batches on Ray workers, streamed back to the driver.

Needs the ``ray`` extra (``pip install 'aieval[ray]'``); Ray is imported only when a run uses it.

How work flows:

- items are cut into batches (one Ray task each, so scheduling is amortised): of ``batch_size``
  items if it is set, else sized by the work: the first of 64 items, later ones grown until a
  batch takes about a quarter of a second on its worker, at most 4,096 items or about 8 MiB of
  pickled items (measured on earlier batches), never fewer than 64;
- at most ``max_in_flight`` batches are submitted at once; the next batch is read from the
  iterable only when one finishes, so a million-row generator never sits in the object store;
- each batch's results come back to the driver as soon as that batch finishes (completion
  order), so the driver, which owns the SQLite store, commits them while others still run;
- an exception in the function is that item's error, and so is an item or a result that
  cannot be pickled (each travels pickled on its own); a worker process that dies (``os._exit``,
  a segfault, the OOM killer, a lost node) fails only its batch, whose items are then retried one
  per task, so the item that kills its worker is found and recorded as an error after
  ``max_attempts`` runs while the others complete;
- a batch running longer than ``batch_timeout`` is cancelled (its worker is killed) and its items
  run again one per task; an item that alone outlives ``batch_timeout`` is recorded as timed
  out: no run hangs on a stuck worker. The time counts from the moment the batch starts on its
  worker (the task first yields a start signal, then its results), so a batch that waited for a
  free worker, or for a worker process to start, loses none of its time to the wait.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from aieval.errors import ConfigError
from aieval.runner._batching import Batch, Sizer, next_batch
from aieval.runner._executor import Finished, describe_error, positive
from aieval.runner._raytask import Packed, batch_task, pack_items, unpack
from aieval.runner._reaper import ClusterReaper, watch_cluster

__all__ = ["INSTALL_HINT", "RayExecutor", "import_ray"]

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


#: Batches in flight: the driver's task awaiting each -> (its Ray ObjectRefGenerator, the batch).
_Running = dict[asyncio.Task[list[Packed]], tuple[Any, Batch]]


class RayExecutor:
    """Runs the function on Ray workers, in batches, with bounded work in flight.

    Args:
        address: the cluster to use: ``"ray://host:10001"``, ``"host:6379"``, ``"auto"`` (a
            cluster started with ``ray start`` on this machine), or ``"local"`` (always start a
            private one). Unset: ``$RAY_ADDRESS`` if set, else the cluster ``ray start``
            runs on this machine if there is one, else a local Ray started for this run and
            shut down after it. An already initialised Ray in this process is used as it is
            and left running.
        batch_size: items per Ray task (unset: sized by the work, from 64 items up to about a
            quarter of a second of work, 4,096 items or about 8 MiB a batch).
        max_in_flight: batches submitted at once (default: twice the cluster's CPUs).
        num_cpus: CPUs of a local Ray started for the run (default: all of this machine's).
        max_attempts: runs of an item whose worker died before it is recorded as an error.
        batch_timeout: seconds a batch may run on its worker before it is cancelled, counted
            from when it starts there (not from submission); its items then run one per task,
            and one that alone takes longer is recorded as timed out (``None``: no limit).
        init_options: extra keyword arguments for ``ray.init`` (``runtime_env``, ...).

    The function and the items are pickled with cloudpickle, as Ray does: a function defined
    in an importable module is sent by reference (workers need the same code), one of
    ``__main__``, a lambda or a closure by value; each item and each result travels pickled
    on its own. A local Ray this executor starts dies with this process, even a killed one. A
    function with a ``for_batches(n)`` method is replaced by what it returns for the number
    of batches that may be in flight (the runner shares a run's concurrency out this way).
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        batch_size: int | None = None,
        max_in_flight: int | None = None,
        num_cpus: int | None = None,
        max_attempts: int = 2,
        batch_timeout: float | None = None,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        self.address = address
        self.batch_size = None if batch_size is None else positive(batch_size, "batch_size")
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
        #: The most items one batch held during the last :meth:`map`.
        self.largest_batch = 0
        self._reaper: ClusterReaper | None = None

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
            if self._reaper is not None:
                self._reaper.release()
                self._reaper = None

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
            self._reaper = watch_cluster(ray)  # the cluster dies with this process
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
        remote = ray.remote(batch_task).options(max_retries=0)
        bound = self.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        share = getattr(fn, "for_batches", None)
        if callable(share):  # a function that divides a budget (the run's concurrency)
            fn = share(bound)
        fn_ref = ray.put(fn)
        retry: deque[Batch] = deque()
        running: _Running = {}
        sizer = Sizer(self.batch_size)
        self.peak_in_flight = self.crashed_batches = self.largest_batch = 0
        try:
            while True:
                while len(running) < bound and (batch := next_batch(retry, source, sizer)):
                    batch, packed, refused = pack_items(batch)
                    for finished in refused:
                        yield finished
                    if not packed:
                        continue
                    sizer.weigh(len(packed), sum(len(data) for _, data in packed))
                    gen = remote.remote(fn_ref, packed)
                    waiting = self._await_batch(ray, gen, batch, sizer)
                    running[asyncio.ensure_future(waiting)] = (gen, batch)
                self.largest_batch = sizer.largest
                if not running:
                    return
                in_flight = sum(len(b.items) for _, b in running.values())
                self.peak_in_flight = max(self.peak_in_flight, in_flight)
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    _, batch = running.pop(task)
                    for finished in self._outcomes(ray, task, batch, retry):
                        yield finished
        finally:
            # Stopped early (Ctrl-C, the consumer left): cancel what runs, and take the outcome
            # of every batch left behind, so none is logged as an exception never retrieved
            # (a cancelled batch's TaskCancelledError, one that ended as the stop came) at exit.
            for task, (gen, _) in running.items():
                if task.done():
                    _retrieve(task)
                else:
                    task.cancel()
                    task.add_done_callback(_retrieve)
                ray.cancel(gen, force=True)

    async def _await_batch(self, ray: Any, gen: Any, batch: Batch, sizer: Sizer) -> list[Packed]:
        """A batch's results; its ``batch_timeout`` counts from its start signal.

        Raises:
            TimeoutError: the batch ran longer than ``batch_timeout`` (it was cancelled).
        """
        await (await gen.__anext__())  # the start signal: the batch runs on a worker now
        batch.started = time.monotonic()
        timed: Awaitable[tuple[float, list[Packed]]] = _next_value(gen)
        try:
            seconds, results = await asyncio.wait_for(timed, self.batch_timeout)
        except TimeoutError:
            batch.timed_out = True
            ray.cancel(gen, force=True)
            raise
        sizer.learn(len(batch.items), seconds)
        return results

    def _outcomes(
        self, ray: Any, task: asyncio.Future[Any], batch: Batch, retry: deque[Batch]
    ) -> list[Finished[Any, Any]]:
        """The batch's results, or its items' errors, or nothing when they were re-queued."""
        items = dict(batch.items)
        try:
            results = task.result()
        except ray.exceptions.RayTaskError as exc:
            # The batch runner itself failed (e.g. the function could not be unpickled there).
            return _fail(batch, describe_error(exc.cause if exc.cause is not None else exc))
        except ray.exceptions.RayError as exc:
            return self._crashed(batch, exc, retry)
        except TimeoutError as exc:
            if not batch.timed_out:
                raise
            return self._crashed(batch, exc, retry)
        return [
            unpack(index, items[index], data, error, batch.attempts)
            for index, data, error in results
        ]

    def _crashed(
        self, batch: Batch, exc: BaseException, retry: deque[Batch]
    ) -> list[Finished[Any, Any]]:
        """A dead worker: split the batch into single items, or record the error."""
        if batch.timed_out:
            if len(batch.items) > 1:
                # One slow item must not cost its batch mates: each gets a run of its own.
                retry.extend(Batch([pair], batch.attempts + 1) for pair in batch.items)
                return []
            limit = f"batch_timeout={self.batch_timeout}s"
            return _fail(batch, f"TimeoutError: the sample ran longer than {limit}")
        self.crashed_batches += 1
        if batch.attempts < self.max_attempts:
            retry.extend(Batch([pair], batch.attempts + 1) for pair in batch.items)
            return []
        if len(batch.items) > 1:
            # Out of attempts as a group: give each item one run of its own to find the culprit.
            retry.extend(Batch([pair], batch.attempts) for pair in batch.items)
            return []
        summary = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        # Not the target's failure: whatever ran (the target, a scorer, native code) took the
        # process down, so the record says the sample's processing crashed, then Ray's account.
        tries = f"{batch.attempts} attempt{'s' if batch.attempts > 1 else ''}"
        error = f"sample processing crashed (worker died, {tries}): {type(exc).__name__}" + (
            f": {summary}" if summary else ""
        )
        return _fail(batch, error)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Take a left batch's outcome: it is dropped (its samples run again on resume)."""
    if not task.cancelled():
        task.exception()


async def _next_value(gen: Any) -> Any:
    """The next value a Ray generator task yields (its error, raised, if it failed)."""
    return await (await gen.__anext__())


def _fail(batch: Batch, error: str) -> list[Finished[Any, Any]]:
    """The same recorded error for every item of a batch."""
    return [Finished(i, item, error=error, attempts=batch.attempts) for i, item in batch.items]
