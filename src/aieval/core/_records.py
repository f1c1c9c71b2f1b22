"""What a run records per sample: the output, each score, each model call."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from aieval.errors import ConfigError

if TYPE_CHECKING:
    from aieval.core._verdict import Verdict

__all__ = ["CallRecord", "SampleRecord", "ScoreRecord", "redact_record", "split_epoch"]


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
    #: the provider's finish reason (``stop``, ``length``...), when it gave one; read by the
    #: ``finish_reason`` check while the sample is scored (not stored)
    finish_reason: str | None = None


@dataclass(slots=True)
class ScoreRecord:
    """One scorer's result on one sample; ``value`` is None when the scorer failed (``error``)
    or found the sample not applicable (no ``error``: see :attr:`not_applicable`).

    A judge whose verdict was malformed still has a value (0.0; a tie for a pairwise judge),
    and :attr:`unreadable` (also :attr:`malformed`) says why that value is not the judge's
    grade: the sample could not be scored.
    """

    value: float | None
    raw: Any = None
    reason: str | None = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    unreadable: str | None = None

    @property
    def malformed(self) -> str | None:
        """Why this judge score rests on malformed verdicts (:attr:`unreadable`), else None.
        Such a sample never passes the pass threshold and counts as errored."""
        return self.unreadable or None

    @property
    def not_applicable(self) -> bool:
        """Whether the scorer returned no value without failing (``Score(None)``: "n/a")."""
        return self.value is None and self.error is None


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
    #: What the run's grader decided (see :class:`aieval.core.Verdict`): set on every record
    #: that leaves the runner or a store (an earlier store's row gets one from its stored pass
    #: flag and its run's ``pass_threshold``); ``None`` only on a record built by hand and not
    #: graded yet, which readers refuse (see :meth:`graded_verdict`).
    verdict: Verdict | None = None
    #: The repeat (1..N) of a run with ``epochs=N > 1``, whose sample ``id`` is
    #: ``<example id>#<epoch>``; ``None`` in a run of one epoch.
    epoch: int | None = None

    def graded_verdict(self) -> Verdict:
        """The sample's :attr:`verdict`; a :class:`~aieval.errors.ConfigError` naming the
        sample when it has none (a record built by hand that no grader has decided): readers
        never guess a pass threshold."""
        if self.verdict is None:
            raise ConfigError(
                f"sample {self.id!r} has no verdict: records from a run or a store have one; "
                "set the verdict of a record built by hand, e.g. record.verdict = "
                "ThresholdGrader(pass_threshold).grade(GradeInput(record, example))"
            )
        return self.verdict

    @property
    def example_id(self) -> str:
        """The id of the dataset example this sample answers (its ``id`` without the epoch)."""
        if self.epoch is None:
            return self.id
        return self.id.removesuffix(f"#{self.epoch}")

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
        """``{"target" or scorer name: message}`` for everything that failed on this sample,
        a judge's malformed verdict included (its score keeps its 0.0 value)."""
        found = {
            name: s.error or f"malformed judge verdict: {s.malformed}"
            for name, s in self.scores.items()
            if s.error or s.malformed
        }
        if self.error:
            found = {"target": self.error, **found}
        return found

    @property
    def unscored(self) -> bool:
        """Whether scorers ran on this sample and every one was not applicable (n/a).

        An unscored sample has no error and no score: it is not passed (nor errored).
        """
        return bool(self.scores) and all(s.not_applicable for s in self.scores.values())


def split_epoch(extra: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """A stored sample's ``extra`` without its ``epoch`` key, and the epoch (a run of epochs
    keeps each sample's epoch there, so stores need no new column).

    >>> split_epoch({"epoch": 2, "k": 1}), split_epoch({})
    (({'k': 1}, 2), ({}, None))
    """
    epoch = extra.get("epoch")
    if not isinstance(epoch, int) or isinstance(epoch, bool):
        return extra, None
    return {k: v for k, v in extra.items() if k != "epoch"}, epoch


def redact_record(record: SampleRecord, secrets: frozenset[str]) -> None:
    """Replace every known secret value in ``record``'s text, in place, before it is stored.

    A model that repeats its request, or a gateway error that echoes a header, must not carry
    a configured credential into the store, the reports or the viewer.
    """
    if not secrets:
        return
    from aieval._secrets import redact_data, redact_text

    def text(value: str | None) -> str | None:
        return redact_text(value, secrets) if value else value

    record.prediction = text(record.prediction)
    record.error = text(record.error)
    record.input = redact_data(record.input, secrets, by_key=False)
    record.expected = redact_data(record.expected, secrets, by_key=False)
    for score in record.scores.values():
        score.reason, score.error = text(score.reason), text(score.error)
        score.unreadable = text(score.unreadable)
        score.raw = redact_data(score.raw, secrets, by_key=False)
        score.metadata = redact_data(score.metadata, secrets, by_key=False)
    for call in record.calls:
        call.error = text(call.error)
    record.extra = redact_data(record.extra, secrets, by_key=False)
    if record.verdict is not None:
        from aieval.core._verdict import Reason

        verdict = record.verdict
        record.verdict = replace(
            verdict,
            reasons=tuple(Reason(r.kind, r.key, text(r.text) or "") for r in verdict.reasons),
            workflow=redact_data(verdict.workflow, secrets, by_key=False),
        )
