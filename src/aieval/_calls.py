"""Per-sample collection of model calls, so judges can report the calls they make."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

from aieval._records import CallRecord

if TYPE_CHECKING:
    from aieval._usage_figures import ModelPrice
    from aieval.providers import ChatResponse

__all__ = [
    "call_from_response",
    "collect_calls",
    "current_calls",
    "current_prices",
    "measured_latency",
    "note_latency",
    "record_call",
]

_calls: ContextVar[list[CallRecord] | None] = ContextVar("aieval_calls", default=None)
_prices: ContextVar[Mapping[str, ModelPrice] | None] = ContextVar("aieval_prices", default=None)
_latency: ContextVar[float | None] = ContextVar("aieval_latency", default=None)


def record_call(call: CallRecord) -> None:
    """Attach a model call to the sample being processed (no-op outside a run)."""
    calls = _calls.get()
    if calls is not None:
        calls.append(call)


def collect_calls(prices: Mapping[str, ModelPrice] | None = None) -> list[CallRecord]:
    """Start collecting the current sample's calls; returns the list that fills up.

    ``prices`` are the run's (``{model: ModelPrice}``), which checks on cost read through
    :func:`current_prices` to price a call whose provider reported no cost.
    """
    calls: list[CallRecord] = []
    _calls.set(calls)
    _prices.set(prices or {})
    _latency.set(None)
    return calls


def note_latency(seconds: float | None) -> None:
    """Record how long the target took to answer the sample being processed, as the runner
    measured it (wall time around a callable target's call)."""
    _latency.set(seconds)


def measured_latency() -> float | None:
    """The runner's measurement of the target's answer time for this sample (None outside a
    run, or when the target did not answer)."""
    return _latency.get()


def current_prices() -> Mapping[str, ModelPrice]:
    """The run's model prices for the sample being processed (empty outside a run)."""
    return _prices.get() or {}


def current_calls() -> list[CallRecord] | None:
    """A copy of the model calls recorded so far for the sample being processed (the target's
    first, then the judges' that answered already); ``None`` outside a run's sample."""
    calls = _calls.get()
    return None if calls is None else list(calls)


def call_from_response(
    purpose: str, provider: str | None, model: str, response: ChatResponse
) -> CallRecord:
    """The record of one successful model call: who answered, tokens, latency, retries, cache.

    A cache hit keeps the original call's latency and usage (an old entry without a recorded
    latency has ``latency_s`` None).
    """
    unknown = response.cached and not response.latency_s
    return CallRecord(
        purpose,
        provider,
        response.model or model,
        latency_s=None if unknown else response.latency_s,
        input_tokens=response.input_tokens,
        output_tokens=response.output_tokens,
        cost=response.cost,
        retries=response.retries,
        cached=response.cached,
        finish_reason=response.finish_reason,
    )
