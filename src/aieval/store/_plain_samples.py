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

__all__ = [
    "PLAIN_SAMPLE_COLUMNS",
    "PLAIN_SAMPLE_FIXED",
    "PLAIN_SCORE_COLUMNS",
    "PLAIN_SCORE_FIXED",
    "PlainRows",
    "PlainSamples",
    "plain_rows",
]


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


#: The columns of a plain sample's row that differ from sample to sample, in the order
#: :func:`plain_rows` gives them; every other column is one of :data:`PLAIN_SAMPLE_FIXED`
#: (with the run id) or ``created_at`` (the batch's time, bound in each row: a float).
PLAIN_SAMPLE_COLUMNS = (
    "sample_id", "idx", "input", "expected", "prediction", "metadata", "passed", "created_at",
    "verdict", "weighted_score", "verdict_passed", "promotion_score",
)  # fmt: skip
#: The values a plain sample's row holds in its other columns (besides ``run_id``): no error,
#: latency, usage, cost, retries, extra, grade, epoch or value rows; a plain verdict.
PLAIN_SAMPLE_FIXED: tuple[tuple[str, Any], ...] = (
    ("error", None), ("latency_s", None), ("input_tokens", None), ("output_tokens", None),
    ("cost", None), ("retries", 0), ("cached", 0), ("extra", None), ("verdict_plain", 1),
    ("grade", None), ("epoch", None), ("verdict_values", FIGURES_VALUES),
)  # fmt: skip
#: The columns of a plain score's row that differ; the others (besides ``run_id``) are NULL.
PLAIN_SCORE_COLUMNS = ("sample_id", "scorer", "value")
PLAIN_SCORE_FIXED: tuple[tuple[str, Any], ...] = tuple(
    (name, None) for name in ("raw", "reason", "error", "metadata", "unreadable")
)


@dataclass(frozen=True, slots=True)
class PlainRows:
    """A batch's ``samples`` rows (of :data:`PLAIN_SAMPLE_COLUMNS`) and ``scores`` rows (of
    :data:`PLAIN_SCORE_COLUMNS`), stamped ``now``: with the fixed columns, the very rows the
    record path binds."""

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


def plain_rows(batch: PlainSamples) -> PlainRows:
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
                sample_id, index, _json(given), _json(expected), prediction,
                dumps(metadata) if metadata else None, int(passed), now, text,
                score, int(passed), score,  # the verdict's score and pass flag
            )
        )  # fmt: skip
    scores = [
        (sample_id, name, value)
        for sample_id, *values in zip(batch.ids, *batch.values, strict=True)
        for name, value in zip(batch.scorers, values, strict=True)
    ]
    return PlainRows(samples, scores, now)
