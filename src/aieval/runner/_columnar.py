"""A chunk of recorded samples finished as columns, when every sample of it is plain.

A large run of recorded predictions scored by built-in scorers is nearly all plain samples
(see :class:`~aieval.store.PlainSamples`). Such a chunk is graded from its scorers' batch
results as lists and handed to the store and the run's tally as columns: no record, score or
verdict object per sample. A chunk with any sample that is not plain, or a run with anything
a sample would need on its own (checks of its own, a grader other than the threshold
grader's plain rule, secrets to redact, observers), takes the per-sample path whole, and
the debug log says why. Both paths store the same rows and tally the same summary
(``tests/runner/test_columnar.py``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from aieval._floors import at_least
from aieval.core import Reason, ThresholdGrader
from aieval.runner._prescore import Item
from aieval.runner._target import RecordedTarget
from aieval.store import PlainSamples

if TYPE_CHECKING:
    from aieval.runner._sample import SampleProcessor

__all__ = ["ChunkGrader", "columnar_refusal"]

log = logging.getLogger("aieval")


def columnar_refusal(processor: SampleProcessor) -> str | None:
    """Why the processor's recorded samples cannot be finished as columns (``None``: they can,
    chunk by chunk, where each chunk is plain)."""
    prescorer = processor.prescorer
    if prescorer is None or type(processor.target) is not RecordedTarget:
        return "not a run of recorded predictions batch-scored in this process"
    if len(prescorer.batched) != len(processor.scorers):
        return "a scorer has no batch implementation"
    names = [s.name for s in processor.scorers]
    if len(set(names)) != len(names):
        return "two scorers share a name"
    if type(processor.grader) is not ThresholdGrader:
        return "the run's grader is not the threshold grader"
    if processor.thresholds or processor.weights:
        return "a scorer has its own threshold or weight"
    if processor.secrets:
        return "the run redacts secrets from each sample"
    return None


class ChunkGrader:
    """Makes the :class:`PlainSamples` of a chunk of recorded samples, or ``None`` (with the
    reason in the debug log) for a chunk whose samples take the per-sample path."""

    def __init__(self, processor: SampleProcessor) -> None:
        assert processor.prescorer is not None
        self.prescorer = processor.prescorer
        self.names = [s.name for s in processor.scorers]
        self.threshold = processor.pass_threshold
        #: the reasons of each set of scorers below the threshold, by their positions
        self._reasons: dict[tuple[int, ...], tuple[Reason, ...]] = {}

    def __call__(self, chunk: list[Item]) -> PlainSamples | None:
        why = _not_plain(chunk)
        if why is not None:
            log.debug("a chunk of %d samples takes the per-sample path: %s", len(chunk), why)
            return None
        claimed = self.prescorer.columns_of(chunk)
        if claimed is None or len(claimed) != len(self.names):
            log.debug(
                "a chunk of %d samples takes the per-sample path: a scorer did not score it all"
                " in its batch",
                len(chunk),
            )
            return None
        values = [claimed[position] for position in range(len(self.names))]
        for name, column in zip(self.names, values, strict=True):
            if not _unit_floats(column):
                # a score of another kind (an error, n/a, metadata): those samples' own path
                log.debug(
                    "a chunk of %d samples takes the per-sample path: %s gave a score that is"
                    " not a bare value in 0..1",
                    len(chunk),
                    name,
                )
                return None
        self.prescorer.drop_columns()  # stored from here, never made records
        reasons, weighted = self._grade(values)
        examples = [example for _, example in chunk]
        return PlainSamples(
            ids=[example.sample_id for example in examples],
            indexes=[index for index, _ in chunk],
            inputs=[example.input for example in examples],
            expected=[example.expected for example in examples],
            predictions=[example.prediction for example in examples],  # type: ignore[misc]
            metadata=[example.metadata for example in examples],
            scorers=self.names,
            values=values,
            reasons=reasons,
            weighted=weighted,
        )

    def _grade(self, values: list[list[float]]) -> tuple[list[tuple[Reason, ...]], list[float]]:
        """Each sample's threshold reasons and weighted score, as the threshold grader's plain
        rule gives them (``threshold_verdict``)."""
        threshold, count = self.threshold, len(values)
        reasons: list[tuple[Reason, ...]] = []
        weighted: list[float] = []
        known = self._reasons
        for row in zip(*values, strict=True):
            below = (
                ()
                if min(row) >= threshold
                else tuple(
                    k for k, v in enumerate(row) if v < threshold and not at_least(v, threshold)
                )
            )
            if below:
                found = known.get(below)
                if found is None:
                    found = known[below] = tuple(_below(self.names[k], threshold) for k in below)
                reasons.append(found)
            else:
                reasons.append(())
            weighted.append(100.0 * sum(row) / count)
        return reasons, weighted


def _below(name: str, threshold: float) -> Reason:
    """The threshold grader's reason for a score below the run's threshold."""
    return Reason("threshold", name, f"{name} below the pass threshold {threshold:g}")


def _unit_floats(column: list[float]) -> bool:
    """Whether every value is a float in 0..1 (a NaN makes the sum NaN; without one, the
    least and the greatest are exact)."""
    if not column or set(map(type, column)) != {float}:
        return not column
    total = sum(column)
    return total == total and min(column) >= 0.0 and max(column) <= 1.0


def _not_plain(chunk: list[Item]) -> str | None:
    """Why a sample of ``chunk`` is not plain (``None``: every one is)."""
    for _, example in chunk:
        if type(example.prediction) is not str:
            return f"sample {example.sample_id} has no recorded text answer"
        if example.checks:
            return f"sample {example.sample_id} has checks of its own"
        if example.epoch is not None:
            return "the run has epochs"
        fields = example.fields
        if "recorded_latency_s" in fields or "recorded_calls" in fields:
            return f"sample {example.sample_id} has recorded calls or latency"
    return None
