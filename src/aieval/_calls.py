"""Per-sample collection of model calls, so judges can report the calls they make."""

from __future__ import annotations

from contextvars import ContextVar

from aieval._records import CallRecord

__all__ = ["collect_calls", "record_call"]

_calls: ContextVar[list[CallRecord] | None] = ContextVar("aieval_calls", default=None)


def record_call(call: CallRecord) -> None:
    """Attach a model call to the sample being processed (no-op outside a run)."""
    calls = _calls.get()
    if calls is not None:
        calls.append(call)


def collect_calls() -> list[CallRecord]:
    """Start collecting the current sample's calls; returns the list that fills up."""
    calls: list[CallRecord] = []
    _calls.set(calls)
    return calls
