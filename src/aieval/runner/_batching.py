"""How ``RayExecutor`` cuts items into batches: fixed, or sized by the measured work."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Batch", "Sizer", "next_batch"]

#: Sized batches: the first (and smallest) size, the work one aims at, and the caps.
_FIRST_BATCH = 64
_BATCH_SECONDS = 0.25
_MAX_BATCH = 4096
_MAX_BATCH_BYTES = 8 * 1024 * 1024


@dataclass
class Batch:
    """One Ray task's items, and how many runs they have had."""

    items: list[tuple[int, Any]]
    attempts: int = 1
    #: When the batch started on its worker (``time.monotonic()``), once its signal came.
    started: float | None = None
    timed_out: bool = False


class Sizer:
    """Items per batch: fixed, or grown from the measured seconds and bytes of past batches."""

    def __init__(self, fixed: int | None) -> None:
        self.fixed = fixed
        self.size = fixed or _FIRST_BATCH
        self.largest = 0
        self._item_seconds: float | None = None
        self._item_bytes: float | None = None

    def take(self, source: Iterator[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """The next batch's items from ``source``."""
        items = [item for _, item in zip(range(self.size), source, strict=False)]
        self.largest = max(self.largest, len(items))
        return items

    def weigh(self, items: int, size: int) -> None:
        """``items`` of a batch pickled to ``size`` bytes: cap later batches' bytes by it."""
        if self.fixed is None and items > 0:
            per_item = size / items
            known = self._item_bytes
            self._item_bytes = per_item if known is None else (known + per_item) / 2

    def learn(self, items: int, seconds: float) -> None:
        """A batch of ``items`` took ``seconds`` on its worker: size the next ones by it."""
        if self.fixed is not None or items < 1:
            return
        per_item = max(seconds / items, 1e-9)
        known = self._item_seconds
        self._item_seconds = per_item if known is None else (known + per_item) / 2
        want = _BATCH_SECONDS / self._item_seconds
        if self._item_bytes:
            want = min(want, _MAX_BATCH_BYTES / self._item_bytes)
        self.size = int(max(_FIRST_BATCH, min(want, 4 * self.size, _MAX_BATCH)))


def next_batch(
    retry: deque[Batch], source: Iterator[tuple[int, Any]], sizer: Sizer
) -> Batch | None:
    """The next batch to submit: a re-queued one first, else fresh items (``None``: no more)."""
    if retry:
        return retry.popleft()
    items = sizer.take(source)
    return Batch(items) if items else None
