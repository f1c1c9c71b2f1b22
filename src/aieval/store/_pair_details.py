"""What a comparison from sums reads beside :meth:`Store.pair_sums`: the ids of the unpaired
and unscored examples (looked for only when the sums count some), the figures the sums carry
(the weighted scores' sums and 0/100 tables, each scorer's missing counts and 0/1 table), the
tie-break's latency order statistics and the listed examples' numbers; all computed in SQL over
two runs of this store (``report/_compare_sums.py`` uses them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aieval.store._connection import Connection
from aieval.store._pair_sums import BinaryTable, PairSums, ScorerDetails

__all__ = ["ListedSample", "PairDetails", "PairDetailsReader"]

_MAX = 1.7976931348623157e308


@dataclass(frozen=True, slots=True)
class ListedSample:
    """A listed example's numbers on one side."""

    passed: bool
    weighted_score: float | None
    error: str | None


@dataclass(frozen=True, slots=True)
class PairDetails:
    """See the module docstring. ``weighted`` is ``(n, sum b, sum b², sum c, sum c², sum d,
    sum d²)`` over the pairs whose weighted scores are both known, ``weighted_table`` their
    0/100 table; ``promotion_table`` the 0/100 table of the decision's arrays (the examples the
    baseline scored, the candidate's 0 where it is missing or left one unscored)."""

    only_baseline: list[str]
    only_candidate: list[str]
    missing: list[str]
    unscored: list[str]
    weighted: tuple[int, float, float, float, float, float, float]
    weighted_table: BinaryTable
    promotion_table: BinaryTable
    scorers: dict[str, ScorerDetails]


class PairDetailsReader(Connection):
    """Two runs of this store paired in SQL (see the module docstring)."""

    def pair_details(self, baseline: str, candidate: str, sums: PairSums) -> PairDetails:
        """The details of ``baseline`` and ``candidate`` (run ids of this store, plain runs
        without epochs: one sample per example) beside their ``sums``
        (:meth:`~aieval.store._pair_sums.PairSumsReader.pair_sums`): the figures come from
        them, and a list they count as empty is not looked for."""
        only_b = self._details_ids(baseline, candidate, scored=False) if sums.only_baseline else []
        only_c = self._details_ids(candidate, baseline, scored=False) if sums.only_candidate else []
        missing = (
            self._details_ids(baseline, candidate, scored=True) if sums.baseline_only[0] else []
        )
        w = sums.weighted
        return PairDetails(
            only_baseline=only_b,
            only_candidate=only_c,
            missing=missing,
            unscored=self._details_unscored(baseline, candidate) if sums.unscored else [],
            weighted=(
                w.n,
                w.baseline,
                w.baseline_squares,
                w.candidate,
                w.candidate_squares,
                w.delta,
                w.delta_squares,
            ),
            weighted_table=sums.weighted_table,
            promotion_table=sums.promotion_table,
            scorers=sums.scorer_details,
        )

    def pair_latencies(
        self, run_id: str, other: str, offset: int, count: int, *, total: int, all_paired: bool
    ) -> list[float]:
        """The ``count`` latencies of ``run_id``'s examples ``other`` has too from ``offset``,
        in increasing order (the order statistics a quantile interpolates), of ``total``
        (``all_paired``: ``other`` has every example of ``run_id``, so none is looked up).
        Past the middle they are counted from the top, so the database keeps only those above
        them, not every latency, in order."""
        paired = "" if all_paired else f" {_paired_to('s', '?')}"
        args = (run_id,) if all_paired else (other, run_id)
        order, count = "ASC", max(min(count, total - offset), 0)
        if offset > total // 2:
            order, offset = "DESC", total - offset - count
        rows = self._read(
            f"SELECT s.latency_s FROM samples s{paired} WHERE s.run_id = ?"
            f" AND s.latency_s IS NOT NULL ORDER BY s.latency_s {order} LIMIT {int(count)}"
            f" OFFSET {int(offset)}",
            args,
        )
        values = [float(r[0]) for r in rows]
        return values if order == "ASC" else values[::-1]

    def listed_samples(self, run_id: str, ids: Sequence[str]) -> dict[str, ListedSample]:
        """The numbers of these samples of ``run_id`` (the listed changes: a few)."""
        out: dict[str, ListedSample] = {}
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ", ".join("?" for _ in part)
            for row in self._read(
                "SELECT sample_id, verdict_passed, weighted_score, error FROM samples"
                f" WHERE run_id = ? AND sample_id IN ({marks})",
                (run_id, *part),
            ):
                weighted = None if row[2] is None else float(row[2])
                out[str(row[0])] = ListedSample(bool(row[1]), weighted, row[3])
        return out

    def _details_ids(self, run_id: str, other: str, *, scored: bool) -> list[str]:
        kept = " AND s.promotion_score IS NOT NULL" if scored else ""
        rows = self._read(
            f"SELECT s.sample_id FROM samples s WHERE s.run_id = ?{kept} AND NOT EXISTS"
            " (SELECT 1 FROM samples o WHERE o.run_id = ? AND o.sample_id = s.sample_id)"
            " ORDER BY s.idx, s.sample_id",
            (run_id, other),
        )
        return [str(r[0]) for r in rows]

    def _details_unscored(self, baseline: str, candidate: str) -> list[str]:
        """The paired examples the baseline scored and the candidate left unscored (no
        promotion score, or a scorer the baseline has a finite value of without one), in the
        baseline's order."""
        finite_b, finite_c = (
            _finite("bs.value", self._details_pg),
            _finite("cs.value", self._details_pg),
        )
        lacks = (
            "EXISTS (SELECT 1 FROM scores bs LEFT JOIN scores cs ON cs.run_id = c.run_id"
            " AND cs.sample_id = bs.sample_id AND cs.scorer = bs.scorer WHERE bs.run_id = b.run_id"
            f" AND bs.sample_id = b.sample_id AND {finite_b} AND NOT COALESCE({finite_c}, FALSE))"
        )
        rows = self._read(
            "SELECT b.sample_id FROM samples b JOIN samples c ON c.run_id = ?"
            " AND c.sample_id = b.sample_id WHERE b.run_id = ? AND b.promotion_score IS NOT NULL"
            " AND CASE WHEN c.promotion_score IS NULL THEN 1 WHEN c.error IS NOT NULL THEN 0"
            f" WHEN {lacks} THEN 1 ELSE 0 END = 1 ORDER BY b.idx, b.sample_id",
            (candidate, baseline),
        )
        return [str(r[0]) for r in rows]

    @property
    def _details_pg(self) -> bool:
        return self.location.backend == "postgres"


def _paired_to(alias: str, other: str) -> str:
    return f"JOIN samples o ON o.run_id = {other} AND o.sample_id = {alias}.sample_id"


def _finite(column: str, pg: bool) -> str:
    bound = f"CAST({_MAX!r} AS DOUBLE PRECISION)" if pg else repr(_MAX)
    return f"({column} >= -{bound} AND {column} <= {bound})"
