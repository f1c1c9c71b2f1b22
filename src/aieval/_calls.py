"""Per-sample collection of model calls, so judges can report the calls they make."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

from aieval._records import CallRecord

if TYPE_CHECKING:
    from aieval.providers import ChatResponse

__all__ = ["call_from_response", "collect_calls", "current_calls", "record_call"]

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
