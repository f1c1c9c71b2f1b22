"""The target contract: what produces a sample's output, and the output it produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aieval.core._example import Example
from aieval.core._records import CallRecord

__all__ = ["Output", "Target", "Usage"]


@dataclass(slots=True)
class Output:
    """A target's answer for one example."""

    text: str | None
    value: Any = None
    error: str | None = None
    latency_s: float | None = None
    calls: list[CallRecord] = field(default_factory=list)
    #: usage the target reports itself (a recorded workflow run's steps); the sample takes it
    #: only when no model call of the target was recorded, so nothing is counted twice
    usage: Usage | None = None
    #: entries the sample stores in its ``extra`` beside its verdict (a workflow run's steps,
    #: as ``workflow_run``, for its timeline)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class Usage:
    """Tokens, cost and retries that a target reports for one output."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    retries: int = 0


class Target:
    """Produces the output for an example."""

    name: str | None = None

    async def produce(self, example: Example) -> Output:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release resources when the run ends."""
