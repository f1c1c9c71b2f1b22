"""Bootstrap resampling engine: one seeded stream of index blocks, gathered on worker threads.

The index stream is the one ``rng.integers(0, n, size=(rows, n))`` gives block by block (blocks
of :data:`BLOCK_ENTRIES` entries), so every result equals, to the last digit, the plain
``values[idx].mean(axis=1)`` loop over the same blocks. Drawing is sequential (one generator);
gathering and reducing a block run on worker threads while the next block is drawn (numpy
releases the GIL in both), each row written by exactly one worker, so results do not depend on
the number of threads.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import pairwise

import numpy as np

from aieval.errors import ConfigError

__all__ = [
    "BLOCK_ENTRIES",
    "resample_means",
    "resample_means_many",
    "resample_progress",
    "resample_rows",
]

#: Bootstrap index matrices are drawn in blocks of about this many entries (8 bytes each), so
#: memory stays near 32 MB per block whatever the sample size and resample count.
BLOCK_ENTRIES = 4_000_000

#: Rows are gathered and reduced in chunks of about this many entries, so a chunk's gathered
#: values stay in the core's cache between the gather and the reduction.
_CHUNK_ENTRIES = 131_072

#: Below this many index entries in all, threads cost more than they save.
_THREADED_ENTRIES = 2_000_000

#: ``kernel(idx, first)``: reduce the resamples ``first .. first + len(idx)``, whose example
#: indices are the rows of ``idx``, into the caller's output arrays.
RowKernel = Callable[[np.ndarray, int], None]


#: ``progress(done, total)``: resamples drawn so far of one stream, and its resamples in all.
Progress = Callable[[int, int], None]

# set by a command that shows a progress bar; a context variable, so library callers and
# other threads are untouched
_PROGRESS: ContextVar[Progress | None] = ContextVar("aieval_resample_progress", default=None)


@contextmanager
def resample_progress(progress: Progress) -> Iterator[None]:
    """Within the block, every bootstrap stream reports ``progress(done, total)`` after each
    block of index rows it draws (what a progress bar shows; no number changes)."""
    token = _PROGRESS.set(progress)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def resample_rows(
    n: int, n_resamples: int, seed: int | None, kernel: RowKernel, *, workers: int | None = None
) -> None:
    """Draw ``n_resamples`` bootstrap index rows over ``n`` items and hand them to ``kernel``.

    Rows come in chunks (a few rows of one block); ``kernel`` must write each resample's result
    from its row alone, so that chunking and threads do not change any number.

    Args:
        n: items per resample (> 0).
        n_resamples: resamples (rows) to draw.
        seed: generator seed; ``None`` for fresh randomness.
        kernel: reduces a chunk of index rows into its outputs.
        workers: threads that gather and reduce while the calling thread draws; default the
            usable cores, 0 to do everything in the calling thread.
    """
    if n < 1:
        raise ConfigError(f"resampling needs at least one value, got {n}")
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_ENTRIES // n)
    chunk = max(1, _CHUNK_ENTRIES // n)
    threads = _workers() if workers is None else max(0, workers)
    progress = _PROGRESS.get()
    if threads == 0 or n * n_resamples < _THREADED_ENTRIES:
        for start in range(0, n_resamples, block):
            idx = rng.integers(0, n, size=(min(block, n_resamples - start), n))
            _run(kernel, idx, start, 0, len(idx), chunk)
            if progress is not None:
                progress(start + len(idx), n_resamples)
        return
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="aieval-bootstrap") as pool:
        in_flight: deque[list[Future[None]]] = deque()
        try:
            for start in range(0, n_resamples, block):
                idx = rng.integers(0, n, size=(min(block, n_resamples - start), n))
                cuts = np.linspace(0, len(idx), min(threads, len(idx)) + 1).astype(int).tolist()
                in_flight.append(
                    [pool.submit(_run, kernel, idx, start, a, b, chunk) for a, b in pairwise(cuts)]
                )
                while len(in_flight) >= max(2, threads):  # blocks held: at most one per core
                    _wait(in_flight.popleft())
                if progress is not None:
                    progress(start + len(idx), n_resamples)
            while in_flight:
                _wait(in_flight.popleft())
        finally:
            for futures in in_flight:
                for future in futures:
                    future.cancel()


def resample_means(
    values: np.ndarray, *, n_resamples: int = 2000, seed: int | None = 0
) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of ``values``, drawn block by block."""
    means: np.ndarray = resample_means_many([values], n_resamples=n_resamples, seed=seed)[0]
    return means


def resample_means_many(
    columns: Sequence[np.ndarray] | np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int | None = 0,
    workers: int | None = None,
) -> np.ndarray:
    """Bootstrap means of several equal-length columns from one stream of resample indices.

    Row ``j`` of the result is, to the last digit, ``resample_means(columns[j], n_resamples=
    n_resamples, seed=seed)``: with the same seed every column of the same length sees the same
    indices, so they are drawn once and each column is gathered and averaged from them. Paired
    columns (two versions of the same examples) thus keep their pairs.

    Args:
        columns: ``k`` one-dimensional float columns of the same length ``n > 0``.
        n_resamples: bootstrap resamples.
        seed: random seed; ``None`` for fresh randomness (shared by the columns).
        workers: gathering threads; default the usable cores, 0 for none.

    Returns:
        A ``(k, n_resamples)`` array of resampled means.

    Raises:
        ConfigError: no column, a column not one-dimensional, empty or of another length.
    """
    data = [np.asarray(c, dtype=float) for c in columns]
    if not data:
        raise ConfigError("resample_means_many needs at least one column")
    n = data[0].size
    for j, column in enumerate(data):
        if column.ndim != 1 or column.size == 0 or column.size != n:
            raise ConfigError(
                f"resample_means_many: column {j} has shape {column.shape}; every column must "
                f"be one-dimensional with the same non-zero length ({n})"
            )
    if n_resamples < 0:
        raise ConfigError(f"n_resamples must be >= 0, got {n_resamples!r}")
    out = np.empty((len(data), n_resamples))

    def means(idx: np.ndarray, first: int) -> None:
        rows = slice(first, first + len(idx))
        for j, column in enumerate(data):
            # contiguous rows, so the mean's pairwise sum is exactly values[idx].mean(axis=1)'s
            out[j, rows] = np.take(column, idx).mean(axis=1)

    resample_rows(n, n_resamples, seed, means, workers=workers)
    return out


def _run(kernel: RowKernel, idx: np.ndarray, start: int, a: int, b: int, chunk: int) -> None:
    for lo in range(a, b, chunk):
        hi = min(lo + chunk, b)
        kernel(idx[lo:hi], start + lo)


def _wait(futures: list[Future[None]]) -> None:
    for future in futures:
        future.result()


def _workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))
