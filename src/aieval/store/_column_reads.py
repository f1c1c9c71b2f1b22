"""Reading a run's samples as columns: what a report of plain verdicts needs, in bulk.

A report of a large run reads its samples' numbers as arrays (one query per table) instead of
one :class:`~aieval._records.SampleRecord` per sample; sums of integers and counts run in SQL.
Only runs whose every sample has a plain verdict in the typed columns (``VERDICT_COLUMNS``,
written since schema version 4) are read so; :meth:`ColumnReader.plain_run` says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from aieval.store._connection import Connection

__all__ = ["CallTotals", "ColumnReader", "SampleColumns", "ScoreColumns"]


@dataclass(frozen=True, slots=True)
class SampleColumns:
    """A run's samples in dataset order ``(idx, sample_id)``, one array entry per sample.

    ``NaN`` stands for NULL in the float columns. ``failed_verdicts`` holds the stored verdict
    of each sample that did not pass (by position); ``metadata`` and ``extra`` are the JSON
    texts (``None``: NULL), ``metadata`` only when asked for.
    """

    ids: list[str]
    error: np.ndarray
    passed: np.ndarray
    weighted_score: np.ndarray
    latency_s: np.ndarray
    cost: np.ndarray
    failed_verdicts: dict[int, str]
    extra: list[str | None]
    metadata: list[str | None] | None


@dataclass(frozen=True, slots=True)
class ScoreColumns:
    """One scorer's scores in sample order: the position of each scored sample, its value
    (``NaN``: none), whether it failed (no value, or an error), whether it was n/a."""

    positions: np.ndarray
    values: np.ndarray
    errors: np.ndarray
    not_applicable: np.ndarray


@dataclass(frozen=True, slots=True)
class CallTotals:
    """Sums over a run's samples and model calls, computed by the database (integers only)."""

    target_input_tokens: int
    target_output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int
    answered_calls: int
    cached_calls: int
    retries: int
    cached_samples: int
    #: samples without a cost that spent tokens or made a call that answered
    unpriced: int


class ColumnReader(Connection):
    """Bulk reads of a run's sample columns (see the module docstring)."""

    def plain_run(self, run_id: str) -> bool:
        """Whether every stored sample of the run has a plain verdict in the typed columns."""
        row = self._read_one(
            "SELECT COUNT(*) FROM samples WHERE run_id = ?"
            " AND (verdict_plain IS NULL OR verdict_plain <> 1 OR verdict_passed IS NULL)",
            (run_id,),
        )
        return row is not None and int(row[0]) == 0

    def sample_columns(self, run_id: str, *, metadata: bool = False) -> SampleColumns:
        """The run's samples as columns, in dataset order."""
        rows = self._read(
            "SELECT sample_id, CASE WHEN error IS NULL THEN 0 ELSE 1 END, verdict_passed,"
            " weighted_score, latency_s, cost,"
            " CASE WHEN verdict_passed = 0 THEN verdict END, extra,"
            f" {'metadata' if metadata else 'NULL'}"
            " FROM samples WHERE run_id = ? ORDER BY idx, sample_id",
            (run_id,),
        )
        columns: list[Any] = list(zip(*rows, strict=True)) if rows else [()] * 9
        del rows  # the row tuples: the columns hold their values
        failed = {i: text for i, text in enumerate(columns[6]) if text is not None}
        return SampleColumns(
            ids=list(columns[0]),
            error=np.array(columns[1], dtype=bool),
            passed=np.array(columns[2], dtype=bool),
            weighted_score=_floats(columns[3]),
            latency_s=_floats(columns[4]),
            cost=_floats(columns[5]),
            failed_verdicts=failed,
            extra=list(columns[7]),
            metadata=list(columns[8]) if metadata else None,
        )

    def score_columns(
        self, run_id: str, positions: dict[str, int]
    ) -> tuple[dict[str, ScoreColumns], list[tuple[str, str, str | None]]]:
        """Each scorer's columns (in the order scorers first appear over the samples), and the
        ``(scorer, metadata, unreadable)`` of every score whose metadata has judge counts.

        ``positions`` maps each sample id to its position in dataset order.
        """
        rows = self._read(
            "SELECT sample_id, scorer, value, CASE WHEN error IS NULL THEN 0"
            " WHEN error = '' THEN 1 ELSE 2 END, rowid FROM scores WHERE run_id = ?",
            (run_id,),
        )
        judged = [
            (row[0], row[1], row[2])
            for row in self._read(
                "SELECT scorer, metadata, unreadable FROM scores"
                " WHERE run_id = ? AND metadata LIKE '%parse_failures%'",
                (run_id,),
            )
        ]
        if not rows:
            return {}, judged
        ids, scorers, values, errors, rowids = zip(*rows, strict=True)
        codes: dict[str, int] = {}
        code = np.array([codes.setdefault(name, len(codes)) for name in scorers], dtype=np.int64)
        where = np.array([positions[i] for i in ids], dtype=np.int64)
        order = np.lexsort((np.array(rowids, dtype=np.int64), where))
        code, where = code[order], where[order]
        value = _floats(values)[order]
        error = np.array(errors, dtype=np.int8)[order]
        names = list(codes)
        _, first = np.unique(code, return_index=True)
        out: dict[str, ScoreColumns] = {}
        for c in code[np.sort(first)].tolist():
            mask = code == c
            v, e = value[mask], error[mask]
            na = np.isnan(v) & (e == 0)
            out[names[c]] = ScoreColumns(
                positions=where[mask],
                values=v,
                errors=~na & (np.isnan(v) | (e == 2)),
                not_applicable=na,
            )
        return out, judged

    def call_totals(self, run_id: str) -> CallTotals:
        """The run's integer sums and counts, computed in SQL."""
        samples = self._read_one(
            "SELECT COALESCE(SUM(COALESCE(input_tokens, 0)), 0),"
            " COALESCE(SUM(COALESCE(output_tokens, 0)), 0), COALESCE(SUM(retries), 0),"
            " COALESCE(SUM(CASE WHEN cached <> 0 THEN 1 ELSE 0 END), 0)"
            " FROM samples WHERE run_id = ?",
            (run_id,),
        )
        calls = self._read_one(
            "SELECT COALESCE(SUM(CASE WHEN purpose <> 'target' THEN COALESCE(input_tokens, 0)"
            " ELSE 0 END), 0),"
            " COALESCE(SUM(CASE WHEN purpose <> 'target' THEN COALESCE(output_tokens, 0)"
            " ELSE 0 END), 0),"
            " COALESCE(SUM(CASE WHEN error IS NULL THEN 1 ELSE 0 END), 0),"
            " COALESCE(SUM(CASE WHEN error IS NULL AND cached <> 0 THEN 1 ELSE 0 END), 0)"
            " FROM model_calls WHERE run_id = ?",
            (run_id,),
        )
        unpriced = self._read_one(
            "SELECT COUNT(*) FROM samples s WHERE s.run_id = ? AND s.cost IS NULL AND"
            " (s.input_tokens IS NOT NULL OR s.output_tokens IS NOT NULL OR EXISTS"
            " (SELECT 1 FROM model_calls c WHERE c.run_id = s.run_id"
            " AND c.sample_id = s.sample_id AND c.error IS NULL))",
            (run_id,),
        )
        s = [int(v) for v in samples or (0, 0, 0, 0)]
        c = [int(v) for v in calls or (0, 0, 0, 0)]
        return CallTotals(
            target_input_tokens=s[0],
            target_output_tokens=s[1],
            judge_input_tokens=c[0],
            judge_output_tokens=c[1],
            answered_calls=c[2],
            cached_calls=c[3],
            retries=s[2],
            cached_samples=s[3],
            unpriced=int(unpriced[0]) if unpriced is not None else 0,
        )


def _floats(values: Any) -> np.ndarray:
    """A float array of ``values``, NaN for ``None``."""
    return np.array(values, dtype=float) if len(values) else np.empty(0)
