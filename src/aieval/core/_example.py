"""Stage contracts shared by every layer: an example and a score."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Example", "Score"]


@dataclass(slots=True, frozen=True)
class Example:
    """One dataset row.

    Attributes:
        id: unique within the dataset (given by the row, or its 0-based position).
        input: a prompt string, a list of chat messages, or a dict of workflow inputs.
        expected: the reference answer, if any.
        metadata: free-form fields used for slicing reports.
        prediction: a recorded output; when present no model is called.
        fields: the whole row as read, for prompt templates and workflow inputs.
        recorded_error: a failure recorded in place of an output (the row's
            ``recorded_error``, e.g. an imported log's errored sample); without a target, the
            sample is stored with it as its error.
        epoch: which repeat of the example this is (1..N) in a run with ``epochs=N > 1``;
            ``None`` in a run of one epoch.
    """

    id: str
    input: Any
    expected: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    prediction: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    recorded_error: str | None = None
    epoch: int | None = None

    @property
    def sample_id(self) -> str:
        """The id its sample is stored under: ``id``, or ``<id>#<epoch>`` for a repeat.

        >>> Example("q1", "2+2?").sample_id, Example("q1", "2+2?", epoch=2).sample_id
        ('q1', 'q1#2')
        """
        return self.id if self.epoch is None else f"{self.id}#{self.epoch}"

    @property
    def prompt(self) -> str:
        """The input as text: the string itself, the last user message, or JSON of a dict."""
        value = self.input
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            for message in reversed(value):
                if isinstance(message, dict) and message.get("role") == "user":
                    content = message.get("content", "")
                    return content if isinstance(content, str) else json.dumps(content)
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The input as chat messages."""
        if isinstance(self.input, list):
            return list(self.input)
        return [{"role": "user", "content": self.prompt}]


@dataclass(slots=True, frozen=True)
class Score:
    """A scorer's verdict on one sample.

    Attributes:
        value: normalized score in 0..1, or ``None`` when the sample could not be scored.
        raw: the raw value before normalization (a judge's 0..10, a Likert point, ...).
        reason: a short human-readable explanation.
        metadata: anything else worth keeping (judge verdicts, parse failures, ...).
        unreadable: why the sample could not be scored although ``value`` is set (a judge
            whose verdicts were malformed scores 0.0, or a tie); such a sample never passes.
    """

    value: float | None
    raw: Any = None
    reason: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    unreadable: str | None = None
