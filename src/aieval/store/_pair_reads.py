"""Reading what a comparison of two runs of plain verdicts needs, as columns.

``compare_runs`` pairs two runs example by example; for runs whose every sample has a plain
verdict (:meth:`~aieval.store._column_reads.ColumnReader.plain_run`) it reads each run's
per-sample numbers and score values as arrays (one query per table), and the paired samples
whose stored input or expected answer differ (compared in SQL when both runs are in one store).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json import loads
from typing import Any

import numpy as np

from aieval._gc import no_collection
from aieval.core import Verdict, split_epoch
from aieval.store._connection import Connection
from aieval.store._encoding import loads as load_stored

__all__ = ["PairReader", "PairSamples", "PairScores", "TextPair"]

#: score rows read per query
_PAGE = 200_000


@dataclass(frozen=True, slots=True)
class PairSamples:
    """A run's samples in dataset order ``(idx, sample_id)``, one entry per sample.

    ``NaN`` stands for NULL in the float columns (and for a weighted score that is not
    finite); ``errors``
    holds the target's error of each sample whose target failed (by position), ``epochs`` the
    epoch of each sample of a run of epochs (by position).
    """

    ids: Sequence[str]
    passed: np.ndarray
    weighted_score: np.ndarray
    latency_s: np.ndarray
    cost: np.ndarray
    errors: dict[int, str]
    epochs: dict[int, int]
    #: whether each sample spent (a model call answered, or tokens) yet has no cost
    unpriced: np.ndarray


@dataclass(frozen=True, slots=True)
class PairScores:
    """A run's score rows sorted as its samples list them (sample position, then insertion):
    each row's scorer (a code into ``names``, in order of first appearance), sample position
    and value (``NaN``: none, or not finite)."""

    names: list[str]
    code: np.ndarray
    position: np.ndarray
    value: np.ndarray


@dataclass(frozen=True, slots=True)
class TextPair:
    """A paired sample whose stored input or expected answer texts differ (as stored: JSON,
    ``None`` for NULL), the baseline's first."""

    sample_id: str
    inputs: tuple[Any, Any]
    expected: tuple[Any, Any]


class PairReader(Connection):
    """Bulk reads of a run for a comparison (see the module docstring)."""

    def pair_samples(self, run_id: str) -> PairSamples:
        """The run's per-sample numbers, in dataset order."""
        with no_collection():
            return self._pair_samples(run_id)

    def _pair_samples(self, run_id: str) -> PairSamples:
        rows = self._read(
            "SELECT sample_id, verdict_passed, weighted_score, latency_s, cost, error,"
            " CASE WHEN extra LIKE '%epoch%' THEN extra END,"
            " CASE WHEN s.cost IS NULL AND (s.input_tokens IS NOT NULL"
            " OR s.output_tokens IS NOT NULL OR EXISTS (SELECT 1 FROM model_calls c"
            " WHERE c.run_id = s.run_id AND c.sample_id = s.sample_id AND c.error IS NULL))"
            " THEN 1 ELSE 0 END"
            " FROM samples s WHERE s.run_id = ? ORDER BY s.idx, s.sample_id",
            (run_id,),
        )
        columns: list[Any] = list(zip(*rows, strict=True)) if rows else [()] * 8
        del rows
        epochs = {}
        for position, text in enumerate(columns[6]):
            if text is not None:
                _, epoch = split_epoch(loads(text) or {})
                if epoch is not None:
                    epochs[position] = epoch
        return PairSamples(
            ids=list(columns[0]),
            passed=np.array(columns[1], dtype=bool),
            weighted_score=_finite(columns[2]),
            latency_s=_floats(columns[3]),
            cost=_floats(columns[4]),
            errors={i: text for i, text in enumerate(columns[5]) if text is not None},
            epochs=epochs,
            unpriced=np.array(columns[7], dtype=bool),
        )

    def pair_scores(self, run_id: str, positions: Mapping[str, int]) -> PairScores:
        """The run's score rows (see :class:`PairScores`); ``positions`` maps each sample id
        to its position in dataset order."""
        with no_collection():
            return self._pair_scores(run_id, positions)

    def _pair_scores(self, run_id: str, positions: Mapping[str, int]) -> PairScores:
        codes: dict[str, int] = {}
        parts: list[tuple[np.ndarray, ...]] = []
        after: tuple[Any, ...] = ()
        while True:
            # pages in primary-key order, so no page holds all the run's row tuples at once
            rows = self._read(
                "SELECT sample_id, scorer, value, rowid FROM scores WHERE run_id = ?"
                + (" AND (sample_id, scorer) > (?, ?)" if after else "")
                + " ORDER BY sample_id, scorer LIMIT ?",
                (run_id, *after, _PAGE),
            )
            if not rows:
                break
            after = rows[-1][:2]
            ids, scorers, values, rowids = zip(*rows, strict=True)
            del rows
            parts.append(
                (
                    np.array([codes.setdefault(n, len(codes)) for n in scorers], dtype=np.int64),
                    np.array([positions[i] for i in ids], dtype=np.int64),
                    _finite(values),
                    np.array(rowids, dtype=np.int64),
                )
            )
            if len(ids) < _PAGE:
                break
        if not parts:
            empty = np.empty(0, dtype=np.int64)
            return PairScores([], empty, empty, np.empty(0))
        code, where, value, rowid = (np.concatenate(column) for column in zip(*parts, strict=True))
        del parts
        order = np.lexsort((rowid, where))
        code, where, value = code[order], where[order], value[order]
        # names in order of first appearance over the sorted rows
        names = list(codes)
        _, first = np.unique(code, return_index=True)
        seen = code[np.sort(first)]
        remap = np.empty(len(names), dtype=np.int64)
        remap[seen] = np.arange(len(seen))
        return PairScores([names[c] for c in seen.tolist()], remap[code], where, value)

    def sample_weights(self, run_id: str, sample_ids: Sequence[str]) -> dict[str, dict[str, float]]:
        """The scorer weights other than 1 of each sample of ``sample_ids`` whose stored
        verdict has any (as :attr:`Verdict.weights` reads them)."""
        out: dict[str, dict[str, float]] = {}
        seen: dict[str, dict[str, float]] = {}
        page = self._db.max_members
        for start in range(0, len(sample_ids), page):
            member, values = self._db.member_of("sample_id", list(sample_ids[start : start + page]))
            for sample_id, text in self._read(
                f"SELECT sample_id, verdict FROM samples WHERE run_id = ? AND {member}"
                " AND verdict LIKE '%weights%'",
                (run_id, *values),
            ):
                if text not in seen:
                    verdict = Verdict.from_dict(load_stored(text), f"sample {sample_id!r}")
                    seen[text] = dict(verdict.weights)
                if seen[text]:
                    out[sample_id] = seen[text]
        return out

    def sample_texts(self, run_id: str) -> tuple[list[Any], list[Any]]:
        """The stored ``input`` and ``expected`` texts of the run's samples, in dataset order."""
        rows = self._read(
            "SELECT input, expected FROM samples WHERE run_id = ? ORDER BY idx, sample_id",
            (run_id,),
        )
        if not rows:
            return [], []
        inputs, expected = zip(*rows, strict=True)
        return list(inputs), list(expected)

    def changed_texts(self, baseline: str, candidate: str) -> list[TextPair]:
        """The samples of both runs (same sample id) whose stored input or expected texts
        differ, in the candidate's dataset order: compared by the database."""
        rows = self._read(
            "SELECT c.sample_id, b.input, c.input, b.expected, c.expected"
            " FROM samples c JOIN samples b ON b.run_id = ? AND b.sample_id = c.sample_id"
            " WHERE c.run_id = ? AND NOT (COALESCE(b.input = c.input,"
            " b.input IS NULL AND c.input IS NULL) AND COALESCE(b.expected = c.expected,"
            " b.expected IS NULL AND c.expected IS NULL))"
            " ORDER BY c.idx, c.sample_id",
            (baseline, candidate),
        )
        return [TextPair(row[0], (row[1], row[2]), (row[3], row[4])) for row in rows]


def _floats(values: Any) -> np.ndarray:
    """A float array of ``values``, NaN for ``None``."""
    return np.array(values, dtype=float) if len(values) else np.empty(0)


def _finite(values: Any) -> np.ndarray:
    """A float array of ``values``: NaN for ``None`` and for values that are not finite."""
    if not len(values):
        return np.empty(0)
    out = np.array(values, dtype=float)
    out[~np.isfinite(out)] = np.nan
    return out
