"""What a run records per sample: the output, each score, each model call."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallRecord", "SampleRecord", "ScoreRecord"]


@dataclass(slots=True)
class CallRecord:
    """One model call made for a sample (by the target or by a judge)."""

    purpose: str
    provider: str | None = None
    model: str | None = None
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    retries: int = 0
    cached: bool = False
    error: str | None = None


@dataclass(slots=True)
class ScoreRecord:
    """One scorer's result on one sample; ``value`` is None when the scorer failed."""

    value: float | None
    raw: Any = None
    reason: str | None = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SampleRecord:
    """Everything recorded for one example of a run."""

    id: str
    index: int
    input: Any
    expected: Any = None
    prediction: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, ScoreRecord] = field(default_factory=dict)
    error: str | None = None
    passed: bool | None = None
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    retries: int = 0
    cached: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The input as text."""
        if isinstance(self.input, str):
            return self.input
        return json.dumps(self.input, ensure_ascii=False, default=str)

    @property
    def values(self) -> dict[str, float | None]:
        """``{scorer name: value}``; None where the scorer failed."""
        return {name: score.value for name, score in self.scores.items()}

    @property
    def errors(self) -> dict[str, str]:
        """``{"target" or scorer name: message}`` for everything that failed on this sample."""
        found = {name: s.error for name, s in self.scores.items() if s.error}
        if self.error:
            found = {"target": self.error, **found}
        return found
