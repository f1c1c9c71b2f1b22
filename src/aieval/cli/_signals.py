"""SIGTERM (how CI systems and Kubernetes stop a job) handled as Ctrl-C during a run."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

__all__ = ["Termination", "sigterm_as_interrupt"]


class Termination:
    """Whether SIGTERM arrived while :func:`sigterm_as_interrupt` was in force."""

    def __init__(self) -> None:
        self.received = False


@contextlib.contextmanager
def sigterm_as_interrupt(seen: Termination) -> Iterator[None]:
    """Within the block, SIGTERM interrupts as SIGINT does: the handler in place for SIGINT
    (asyncio's, which cancels the run, or Python's) is called, or ``KeyboardInterrupt`` raised
    when SIGINT is ignored (a background job); ``seen`` records it. Nothing changes outside
    the main thread."""

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        seen.received = True
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # not the main thread: the embedding program owns its signals
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
