"""Pausing cyclic garbage collection while a bulk step builds many objects that hold no cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["no_collection"]


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """No cyclic garbage collection while a bulk read makes its row tuples (or a comparison its
    arrays and id maps): they hold no cycles, and a collection pass every few hundred thousand
    new objects rescans every live one (it took most of the time of a read of 100,000
    samples). The collector's state before is restored after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
