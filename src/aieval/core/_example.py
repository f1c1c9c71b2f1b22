"""Stage contracts shared by every layer: an example, the checks a row carries, a score."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ROW_CHECK_PREFIX", "Example", "RowCheck", "Score"]

#: The start of the stored name of a dataset row's own check (``row:contains``), which no
#: run-level scorer may take, so the two never share a score.
ROW_CHECK_PREFIX = "row:"


@dataclass(slots=True, frozen=True)
class RowCheck:
    """One check a dataset row carries in its ``checks`` (or ``assert``) list.

    Attributes:
        key: the name its score is stored under: ``row:`` and the entry's ``name`` option or
            its check's name, with ``#2``, ``#3``... for a second and third of one name in the
            row (``row:contains#2``).
        check: the registered check (scorer) it runs, e.g. ``contains``.
        options: the entry's options as written, ``threshold`` and ``weight`` included and
            ``name`` left out; they are validated when the sample is scored (a bad one is that
            sample's error naming the row and the field).
        where: where it was written in the row, e.g. ``checks[1]``.
    """

    key: str
    check: str
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)
    where: str = "checks"


@dataclass(slots=True, frozen=True, init=False)
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
        checks: the row's own checks (its ``checks``/``assert`` list), scored on this example
            only, beside the run's scorers.
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
    checks: tuple[RowCheck, ...] = ()

    epoch: int | None = None

    def __init__(
        self,
        id: str,
        input: Any,
        expected: Any = None,
        metadata: dict[str, Any] | None = None,
        prediction: str | None = None,
        fields: dict[str, Any] | None = None,
        recorded_error: str | None = None,
        checks: tuple[RowCheck, ...] = (),
        epoch: int | None = None,
    ) -> None:
        # the dataclass's own __init__ sets a frozen field through object.__setattr__, twice
        # the cost of its slot's setter: a run builds an Example per row
        _SET_ID(self, id)
        _SET_INPUT(self, input)
        _SET_EXPECTED(self, expected)
        _SET_METADATA(self, {} if metadata is None else metadata)
        _SET_PREDICTION(self, prediction)
        _SET_FIELDS(self, {} if fields is None else fields)
        _SET_RECORDED_ERROR(self, recorded_error)
        _SET_CHECKS(self, checks)
        _SET_EPOCH(self, epoch)

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


#: The slots' setters (a frozen dataclass refuses ``setattr``; its ``__init__`` uses these).
_SET_ID = Example.__dict__["id"].__set__
_SET_INPUT = Example.__dict__["input"].__set__
_SET_EXPECTED = Example.__dict__["expected"].__set__
_SET_METADATA = Example.__dict__["metadata"].__set__
_SET_PREDICTION = Example.__dict__["prediction"].__set__
_SET_FIELDS = Example.__dict__["fields"].__set__
_SET_RECORDED_ERROR = Example.__dict__["recorded_error"].__set__
_SET_CHECKS = Example.__dict__["checks"].__set__
_SET_EPOCH = Example.__dict__["epoch"].__set__


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
