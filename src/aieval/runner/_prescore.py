"""Scores of recorded samples from their scorers' batch implementations, a chunk at a time.

A run on recorded predictions knows every sample's prediction before it is processed, so
each scorer with a batch implementation (``rouge_l``, ``token_f1``, ``exact_match``,
``json_valid``) scores a chunk of samples in one call as the chunk is read; each sample then
takes its scores instead of calling those scorers. A row the batch could not score (its
:class:`ScorerError`, an invalid value, metadata too deep to store, or a batch call that failed
as a whole) gets no score here and is scored on its own, as without batching, so its error is
that sample's error, worded the same; so is a row whose texts a scorer scores off the event
loop (:data:`~aieval.scorers.OFF_LOOP_CHARS`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from aieval._json import too_deep
from aieval._records import ScoreRecord
from aieval._types import Example
from aieval.errors import ScorerError
from aieval.scorers import OFF_LOOP_CHARS, Scorer, to_score

__all__ = ["MAX_METADATA_DEPTH", "Prescorer"]

#: The deepest a score's metadata may nest: the store encodes it as JSON, whose encoder gives up
#: near Python's recursion limit (and would stop the whole run's writer, not just this score).
MAX_METADATA_DEPTH = 200

#: Samples read ahead and scored together.
CHUNK = 512

Item = tuple[int, Example]


@dataclass(slots=True)
class Columns:
    """A chunk's batch results: the rows scored (those with a prediction) and, by scorer
    position, the rows that scorer scored with its result for each."""

    rows: list[Item]
    results: dict[int, tuple[list[Item], list[Any]]]


class Prescorer:
    """Batch scores of the run's scorers (by their position) for samples read ahead."""

    def __init__(self, scorers: Sequence[Scorer], chunk: int = CHUNK) -> None:
        self.batched = [
            (position, s)
            for position, s in enumerate(scorers)
            if s.batch_fn is not None and not s.is_async and not s.context
        ]
        self.chunk = chunk
        self.names = {position: s.name for position, s in self.batched}
        self._ready: dict[int, dict[int, ScoreRecord]] = {}
        #: the last chunk's batch results, not yet made records (see :meth:`claim`)
        self._columns: Columns | None = None

    def feed(self, items: Iterator[Item]) -> Iterator[Item]:
        """``items`` unchanged, each chunk batch-scored as it is read."""
        if not self.batched:
            yield from items
            return
        while chunk := list(islice(items, self.chunk)):
            self._score(chunk)
            yield from chunk

    def peek(self, index: int) -> dict[int, ScoreRecord] | None:
        """The sample's batch scores by scorer position (``None``: none), kept here."""
        if self._columns is not None:
            self._records()
        return self._ready.get(index) if self._ready else None

    def take(self, index: int) -> dict[int, ScoreRecord] | None:
        """The sample's batch scores by scorer position (``None``: none), forgotten here."""
        if self._columns is not None:
            self._records()
        return self._ready.pop(index, None) if self._ready else None

    def columns_of(self, chunk: list[Item]) -> dict[int, list[Any]] | None:
        """The batch results of ``chunk`` by scorer position, each a list in the chunk's order,
        when ``chunk`` is the chunk last scored and every sample of it has a prediction
        scored by each scorer that gave results (``None`` otherwise)."""
        columns = self._columns
        if columns is None or len(columns.rows) != len(chunk):
            return None
        if any(a[0] != b[0] for a, b in zip(columns.rows, chunk, strict=True)):
            return None
        for rows, results in columns.results.values():
            if rows is not columns.rows or len(results) != len(rows):
                return None  # a scorer left long texts to the samples themselves
        return {position: results for position, (_, results) in columns.results.items()}

    def drop_columns(self) -> None:
        """Forget the last chunk's batch results (its samples were stored from them)."""
        self._columns = None

    def _score(self, chunk: list[Item]) -> None:
        every = [(index, example) for index, example in chunk if example.prediction is not None]
        if not every:
            return
        # a long text is left to the sample itself for a scorer that scores one off the event
        # loop, charged to the sample's check budget: a row never holds up the whole run
        short = [item for item in every if not _long(item[1])]
        if len(short) == len(every):
            short = every  # one list: a scorer given it scored the whole chunk
        inputs = {id(rows): _columns(rows) for rows in (every, short)}
        if self._columns is not None:
            self._records()
        columns = self._columns = Columns(every, {})
        for position, scorer in self.batched:
            rows = short if getattr(scorer.fn, "__aieval_off_loop__", False) else every
            if not rows:
                continue
            predictions, expected = inputs[id(rows)]
            try:
                results = scorer.batch(predictions, expected, errors="return")
            except (KeyboardInterrupt, asyncio.CancelledError):
                raise
            except BaseException:  # each sample is then scored on its own
                continue
            columns.results[position] = (rows, results)

    def _records(self) -> None:
        """The last chunk's batch results as each sample's records (see :meth:`peek`)."""
        columns, self._columns = self._columns, None
        if columns is None:
            return
        ready = self._ready
        for position, (rows, results) in columns.results.items():
            name = self.names[position]
            for (index, _), result in zip(rows, results, strict=True):
                record: ScoreRecord | None
                if type(result) is float and 0.0 <= result <= 1.0:
                    record = ScoreRecord(result)  # what to_score makes of it, in one step
                elif (record := _record(result, name)) is None:
                    continue
                if (scores := ready.get(index)) is None:
                    ready[index] = {position: record}
                else:
                    scores[position] = record


def _long(example: Example) -> bool:
    """Whether the sample's texts would be scored off the event loop (see ``Scorer.score``)."""
    prediction, expected = example.prediction, example.expected
    size = len(prediction) if isinstance(prediction, str) else 0
    return size + (len(expected) if isinstance(expected, str) else 0) >= OFF_LOOP_CHARS


def _columns(rows: list[Item]) -> tuple[list[Any], list[Any]]:
    return [example.prediction for _, example in rows], [example.expected for _, example in rows]


def _record(result: object, name: str) -> ScoreRecord | None:
    """The record of one batch result, or ``None`` for a row scored again on its own (its
    error, an invalid value, metadata too deep to store: worded there as without batching)."""
    if isinstance(result, ScorerError):
        return None
    try:
        score = to_score(result, name)
    except ScorerError:
        return None
    if score.metadata and too_deep(score.metadata, MAX_METADATA_DEPTH):
        return None
    return ScoreRecord(
        score.value,
        score.raw,
        score.reason,
        metadata=score.metadata,
        unreadable=score.unreadable,
    )
