"""What a report from a run's sums needs beside :class:`~aieval.store.RunSums`: the cost's
sums, the weighted score's 0s and 100s (whether it is a rate), and the failed samples'
verdicts grouped by text (each distinct text decoded once, not each failed sample's)."""

from __future__ import annotations

from dataclasses import dataclass

from aieval.store._connection import Connection

__all__ = ["FailedVerdict", "ReportSums", "ReportSumsReader"]

#: the sample ids kept per distinct failed verdict: a report lists at most 5 per reason
_IDS_PER_VERDICT = 5


@dataclass(frozen=True, slots=True)
class ReportSums:
    """A run's counts the report's sums path adds to :class:`~aieval.store.RunSums`.

    ``cost_total`` is the samples' known cost summed in the database's order (within a
    relative 1e-12 of the per-sample sum); ``weighted_zeros`` and ``weighted_hundreds`` count
    the weighted scores equal to 0 and 100 exactly.
    """

    samples: int
    cost_n: int
    cost_total: float
    weighted_zeros: int
    weighted_hundreds: int


@dataclass(frozen=True, slots=True)
class FailedVerdict:
    """One distinct verdict text of the samples that did not pass: how many have it and the
    first of them in dataset order, each as ``(position, sample_id)`` (position: its rank
    among the run's failed samples in dataset order)."""

    text: str
    count: int
    first: tuple[tuple[int, str], ...]


class ReportSumsReader(Connection):
    """The reads of :mod:`aieval.store._report_sums`."""

    def report_sums(self, run_id: str) -> ReportSums:
        """The run's sample count, cost sums and weighted 0s and 100s, in one statement."""
        row = self._read_one(
            "SELECT COUNT(*), COUNT(cost), SUM(cost),"
            " SUM(CASE WHEN weighted_score = 0 THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN weighted_score = 100 THEN 1 ELSE 0 END)"
            " FROM samples WHERE run_id = ?",
            (run_id,),
        )
        values = row if row is not None else (0, 0, None, None, None)
        return ReportSums(
            samples=int(values[0] or 0),
            cost_n=int(values[1] or 0),
            cost_total=float(values[2] or 0.0),
            weighted_zeros=int(values[3] or 0),
            weighted_hundreds=int(values[4] or 0),
        )

    def failed_verdicts(self, run_id: str) -> list[FailedVerdict]:
        """The distinct verdict texts of the run's failed samples (``verdict_passed = 0``),
        each with its count and its first 5 samples: grouped in SQL, so a million failed
        samples that share a few texts read back a few rows."""
        counts = self._read(
            "SELECT verdict, COUNT(*) FROM samples WHERE run_id = ? AND verdict_passed = 0"
            " AND verdict IS NOT NULL GROUP BY verdict",
            (run_id,),
        )
        firsts = self._read(
            "SELECT verdict, pos, sample_id FROM (SELECT verdict, sample_id, pos,"
            " ROW_NUMBER() OVER (PARTITION BY verdict ORDER BY pos) AS k FROM"
            " (SELECT verdict, sample_id, ROW_NUMBER() OVER (ORDER BY idx, sample_id) AS pos"
            " FROM samples WHERE run_id = ? AND verdict_passed = 0 AND verdict IS NOT NULL) t)"
            " u WHERE k <= ? ORDER BY pos",
            (run_id, _IDS_PER_VERDICT),
        )
        text = self._db.text
        ids: dict[str, list[tuple[int, str]]] = {}
        for verdict, pos, sample_id in firsts:
            ids.setdefault(str(text(verdict)), []).append((int(pos), str(text(sample_id))))
        out = []
        for verdict, count in counts:
            key = str(text(verdict))
            out.append(FailedVerdict(key, int(count), tuple(ids.get(key, ()))))
        return out
