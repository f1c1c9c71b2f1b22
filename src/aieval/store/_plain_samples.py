"""Plain samples given as columns, and their stored rows built a batch at a time.

A large run of recorded predictions is nearly all plain samples: a recorded answer, every
scorer's score a bare finite float, the threshold grader's verdict (a pass flag, the
thresholds missed, the weighted score), no error, call, usage, cost, extra or epoch. Such a
batch is handed to the store as columns (:class:`PlainSamples`) instead of one record object
per sample and per score, and its rows are the very rows the record path writes for the same
samples (``tests/runner/test_columnar.py`` compares the stores table by table).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from aieval._numbers import finite
from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Reason, Verdict
from aieval.store._encoding import dumps, encodable
from aieval.store._verdict_columns import FIGURES_VALUES
from aieval.store._verdict_text import plain_verdict_parts, verdict_text

__all__ = ["PlainRows", "PlainSamples", "plain_rows"]


@dataclass(frozen=True, slots=True)
class PlainSamples:
    """A batch of plain samples as columns, each list in sample order.

    ``values[k][i]`` is scorer ``scorers[k]``'s score of sample ``i`` (a finite float, with no
    raw value, reason, error or metadata); ``reasons[i]`` the threshold reasons of its verdict
    (empty when it passed) and ``weighted[i]`` its weighted score. A sample has no error,
    model call, usage, cost, retries, extra or epoch, and its texts need no redaction.
    """

    ids: Sequence[str]
    indexes: Sequence[int]
    inputs: Sequence[Any]
    expected: Sequence[Any]
    predictions: Sequence[str]
    metadata: Sequence[dict[str, Any]]
    scorers: Sequence[str]
    values: Sequence[Sequence[float]]
    reasons: Sequence[tuple[Reason, ...]]
    weighted: Sequence[float]

    def __len__(self) -> int:
        return len(self.ids)

    def records(self) -> list[SampleRecord]:
        """The same samples as records (what the per-sample path would have made)."""
        out = []
        columns = list(zip(self.scorers, self.values, strict=True))
        for i, sample_id in enumerate(self.ids):
            reasons = self.reasons[i]
            verdict = Verdict(
                not reasons, reasons, weighted_score=self.weighted[i], grader="threshold"
            )
            out.append(
                SampleRecord(
                    id=sample_id,
                    index=self.indexes[i],
                    input=self.inputs[i],
                    expected=self.expected[i],
                    prediction=self.predictions[i],
                    metadata=self.metadata[i],
                    scores={name: ScoreRecord(values[i]) for name, values in columns},
                    passed=verdict.passed,
                    verdict=verdict,
                )
            )
        return out


@dataclass(frozen=True, slots=True)
class PlainRows:
    """A batch's ``samples`` and ``scores`` rows, as the record path binds them, stamped
    ``now``."""

    samples: list[tuple[Any, ...]]
    scores: list[tuple[Any, ...]]
    now: float


def _json(value: Any) -> str:
    """:func:`dumps` of ``value``, a text (the common input and expected answer) written by
    the encoder's own function for a string, without the encoder's call."""
    if type(value) is str:
        text = encode_basestring(value)
        if text.isascii() or encodable(text):
            return text
    return dumps(value)


def plain_rows(run_id: str, batch: PlainSamples) -> PlainRows:
    """The rows of ``batch`` (see the module docstring), stamped with the time now."""
    now = time.time()
    parts: dict[int, tuple[tuple[Reason, ...], tuple[str, str] | None]] = {}
    samples: list[tuple[Any, ...]] = []
    for sample_id, index, given, expected, prediction, metadata, reasons, weighted in zip(
        batch.ids,
        batch.indexes,
        batch.inputs,
        batch.expected,
        batch.predictions,
        batch.metadata,
        batch.reasons,
        batch.weighted,
        strict=True,
    ):
        passed = not reasons
        # by identity: a batch's samples share a few reason tuples (kept alive in ``parts``)
        known = parts.get(id(reasons))
        if known is None:
            known = parts[id(reasons)] = (reasons, plain_verdict_parts(passed, reasons))
        around = known[1]
        if around is not None:
            text = f"{around[0]}{float.__repr__(weighted)}{around[1]}"
        else:  # a reason UTF-8 cannot hold: the whole verdict as the record path writes it
            text = verdict_text(Verdict(passed, reasons, weighted_score=weighted))
        score = finite(weighted)
        samples.append(
            (
                run_id, sample_id, index, _json(given), _json(expected), prediction,
                dumps(metadata) if metadata else None, None, int(passed), None,
                None, None, None, 0, 0, None, now, text,
                score, int(passed), 1,  # the verdict's columns: score, pass flag, plain
                None, None, FIGURES_VALUES, score,  # no grade, no epoch, no value rows
            )
        )  # fmt: skip
    scores = [
        (run_id, sample_id, name, value, None, None, None, None, None)
        for sample_id, *values in zip(batch.ids, *batch.values, strict=True)
        for name, value in zip(batch.scorers, values, strict=True)
    ]
    return PlainRows(samples, scores, now)
