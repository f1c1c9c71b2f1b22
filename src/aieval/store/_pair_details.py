"""What a comparison from sums reads beside :meth:`Store.pair_sums`: the ids of the unpaired
and unscored examples, the weighted scores' sums over the pairs both scored, each scorer's
missing counts and 0/1 table, the tie-break's numbers and the listed examples' numbers; all
computed in SQL over two runs of this store (``report/_compare_sums.py`` uses them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aieval.store._connection import Connection

__all__ = ["BinaryTable", "ListedSample", "PairDetails", "PairDetailsReader", "ScorerDetails"]

_MAX = 1.7976931348623157e308


@dataclass(frozen=True, slots=True)
class BinaryTable:
    """Paired values ``b``, ``c``: whether each is a 0/``one`` value (``binary``), and the
    pairs where only the candidate's (``wins``) or only the baseline's (``losses``) is ``one``."""

    binary: bool
    wins: int
    losses: int


@dataclass(frozen=True, slots=True)
class ScorerDetails:
    """One scorer over the paired examples: the pairs only the baseline (``candidate_missing``)
    or only the candidate (``baseline_missing``) has a finite value of, its 0/1 table over the
    pairs both have, and where the record path first meets it (``first``: the first pair's dataset
    position, the side, then its first score row in insertion order: the order samples list
    their scorers, exact when the run's samples were written in dataset order)."""

    candidate_missing: int
    baseline_missing: int
    table: BinaryTable
    first: tuple[int, int, int]


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

    def pair_details(
        self, baseline: str, candidate: str, *, counts: tuple[int, int, int, int] | None = None
    ) -> PairDetails:
        """The details of ``baseline`` and ``candidate`` (run ids of this store, plain runs
        without epochs: one sample per example).

        ``counts``, when the caller knows them (``pair_sums``): the examples only the baseline
        has, those of them it scored, those only the candidate has, and the paired ones the
        candidate left unscored; a list known to be empty is not looked for.
        """
        only_b_n, missing_n, only_c_n, unscored_n = counts or (1, 1, 1, 1)
        only_b = self._details_ids(baseline, candidate, scored=False) if only_b_n else []
        only_c = self._details_ids(candidate, baseline, scored=False) if only_c_n else []
        missing = self._details_ids(baseline, candidate, scored=True) if missing_n else []
        w = self._read_one(
            "SELECT COUNT(*), SUM(b.weighted_score), SUM(b.weighted_score * b.weighted_score),"
            " SUM(c.weighted_score), SUM(c.weighted_score * c.weighted_score),"
            " SUM(c.weighted_score - b.weighted_score), SUM((c.weighted_score - b.weighted_score)"
            " * (c.weighted_score - b.weighted_score)),"
            f" {_table('b.weighted_score', 'c.weighted_score', 100.0)}"
            " FROM samples b JOIN samples c ON c.run_id = ? AND c.sample_id = b.sample_id"
            " WHERE b.run_id = ? AND b.weighted_score IS NOT NULL"
            " AND c.weighted_score IS NOT NULL",
            (candidate, baseline),
        )
        assert w is not None
        unscored, promotion = self._details_promotion(baseline, candidate, bool(unscored_n))
        return PairDetails(
            only_baseline=only_b,
            only_candidate=only_c,
            missing=missing,
            unscored=unscored,
            weighted=(_int(w[0]), *(_float(v) for v in w[1:7])),  # type: ignore[arg-type]
            weighted_table=_binary(w[7:10]),
            promotion_table=promotion,
            scorers=self._details_scorers(baseline, candidate),
        )

    def pair_standing(self, run_id: str, other: str) -> tuple[Any, ...]:
        """Over the examples of ``run_id`` that ``other`` has too: the count and sum of its
        weighted scores, the count of its latencies, the sum of its costs, whether any is
        unpriced."""
        row = self._read_one(
            "SELECT COUNT(s.weighted_score), SUM(s.weighted_score), COUNT(s.latency_s),"
            " SUM(s.cost), COUNT(s.cost), MAX(CASE WHEN s.cost IS NULL AND"
            " (s.input_tokens IS NOT NULL OR s.output_tokens IS NOT NULL OR EXISTS (SELECT 1"
            " FROM model_calls m WHERE m.run_id = s.run_id AND m.sample_id = s.sample_id"
            " AND m.error IS NULL)) THEN 1 ELSE 0 END)"
            f" FROM samples s {_paired_to('s', '?')} WHERE s.run_id = ?",
            (other, run_id),
        )
        assert row is not None
        return row

    def pair_latencies(self, run_id: str, other: str, offset: int, count: int) -> list[float]:
        """The ``count`` latencies of ``run_id``'s examples ``other`` has too from ``offset``,
        in increasing order (the order statistics a quantile interpolates)."""
        rows = self._read(
            f"SELECT s.latency_s FROM samples s {_paired_to('s', '?')} WHERE s.run_id = ?"
            f" AND s.latency_s IS NOT NULL ORDER BY s.latency_s LIMIT {int(count)}"
            f" OFFSET {int(offset)}",
            (other, run_id),
        )
        return [float(r[0]) for r in rows]

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

    def _details_promotion(
        self, baseline: str, candidate: str, any_unscored: bool
    ) -> tuple[list[str], BinaryTable]:
        """The paired examples the candidate left unscored (baseline order), and the 0/100
        table of the decision's arrays (without ``any_unscored``, none of its scores is left
        unscored but for a missing one: the per-scorer test is skipped)."""
        finite_b, finite_c = (
            _finite("bs.value", self._details_pg),
            _finite("cs.value", self._details_pg),
        )
        lacks = (
            "EXISTS (SELECT 1 FROM scores bs LEFT JOIN scores cs ON cs.run_id = c.run_id"
            " AND cs.sample_id = bs.sample_id AND cs.scorer = bs.scorer WHERE bs.run_id = b.run_id"
            f" AND bs.sample_id = b.sample_id AND {finite_b} AND NOT COALESCE({finite_c}, FALSE))"
        )
        un = (
            "CASE WHEN c.promotion_score IS NULL THEN 1 WHEN c.error IS NOT NULL THEN 0"
            f" WHEN {lacks if any_unscored else 'FALSE'} THEN 1 ELSE 0 END"
        )
        rows = (
            []
            if not any_unscored
            else self._read(
                f"SELECT b.sample_id FROM samples b JOIN samples c ON c.run_id = ?"
                " AND c.sample_id = b.sample_id WHERE b.run_id = ?"
                " AND b.promotion_score IS NOT NULL"
                f" AND {un} = 1 ORDER BY b.idx, b.sample_id",
                (candidate, baseline),
            )
        )
        unscored = [str(r[0]) for r in rows]
        cv = f"CASE WHEN {un} = 1 THEN 0.0 ELSE c.promotion_score END"
        row = self._read_one(
            f"SELECT {_table('b.promotion_score', cv, 100.0)} FROM samples b LEFT JOIN samples c"
            " ON c.run_id = ? AND c.sample_id = b.sample_id WHERE b.run_id = ?"
            " AND b.promotion_score IS NOT NULL",
            (candidate, baseline),
        )
        assert row is not None
        # an example the candidate lacks counts 0 for it: COALESCE in _table's terms
        return unscored, _binary(row)

    def _details_scorers(self, baseline: str, candidate: str) -> dict[str, ScorerDetails]:
        fb, fc = _finite("bs.value", self._details_pg), _finite("cs.value", self._details_pg)
        both = f"({fb} AND {fc})"
        rows = self._read(
            f"SELECT bs.scorer, SUM(CASE WHEN {fb} AND NOT COALESCE({fc}, FALSE) THEN 1 ELSE 0"
            f" END), SUM(CASE WHEN {both} AND NOT (bs.value IN (0, 1) AND cs.value IN (0, 1))"
            f" THEN 1 ELSE 0 END), SUM(CASE WHEN {both} AND cs.value = 1 AND bs.value = 0"
            f" THEN 1 ELSE 0 END), SUM(CASE WHEN {both} AND bs.value = 1 AND cs.value = 0"
            " THEN 1 ELSE 0 END), MIN(b.idx), MIN(bs.rowid)"
            " FROM scores bs JOIN samples b ON b.run_id = bs.run_id AND b.sample_id = bs.sample_id"
            " JOIN samples c ON c.run_id = ? AND c.sample_id = bs.sample_id"
            " LEFT JOIN scores cs ON cs.run_id = c.run_id AND cs.sample_id = bs.sample_id"
            " AND cs.scorer = bs.scorer WHERE bs.run_id = ? GROUP BY bs.scorer",
            (candidate, baseline),
        )
        found = {
            str(r[0]): ScorerDetails(
                _int(r[1]),
                0,
                BinaryTable(not _int(r[2]), _int(r[3]), _int(r[4])),
                (_int(r[5]), 0, _int(r[6])),
            )
            for r in rows
        }
        rows = self._read(
            f"SELECT cs.scorer, SUM(CASE WHEN {fc} AND NOT COALESCE({fb}, FALSE) THEN 1 ELSE 0"
            " END), MIN(b.idx), MIN(cs.rowid)"
            " FROM scores cs JOIN samples b ON b.run_id = ? AND b.sample_id = cs.sample_id"
            " LEFT JOIN scores bs ON bs.run_id = b.run_id AND bs.sample_id = cs.sample_id"
            " AND bs.scorer = cs.scorer WHERE cs.run_id = ? GROUP BY cs.scorer",
            (baseline, candidate),
        )
        for r in rows:
            name, missing, first = str(r[0]), _int(r[1]), (_int(r[2]), 1, _int(r[3]))
            old = found.get(name)
            if old is None:
                found[name] = ScorerDetails(0, missing, BinaryTable(True, 0, 0), first)
            else:
                found[name] = ScorerDetails(
                    old.candidate_missing, missing, old.table, min(old.first, first)
                )
        return found

    @property
    def _details_pg(self) -> bool:
        return self.location.backend == "postgres"


def _paired_to(alias: str, other: str) -> str:
    return f"JOIN samples o ON o.run_id = {other} AND o.sample_id = {alias}.sample_id"


def _table(b: str, c: str, one: float) -> str:
    """Three sums: values not 0 or ``one`` on either side (``c`` NULL counts 0), the pairs
    where only ``c`` is ``one``, those where only ``b`` is."""
    cz = f"COALESCE({c}, 0.0)"
    return (
        f"SUM(CASE WHEN {b} IN (0, {one!r}) AND {cz} IN (0, {one!r}) THEN 0 ELSE 1 END),"
        f" SUM(CASE WHEN {cz} = {one!r} AND {b} = 0 THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN {b} = {one!r} AND {cz} = 0 THEN 1 ELSE 0 END)"
    )


def _binary(row: Sequence[Any]) -> BinaryTable:
    return BinaryTable(not _int(row[0]), _int(row[1]), _int(row[2]))


def _finite(column: str, pg: bool) -> str:
    bound = f"CAST({_MAX!r} AS DOUBLE PRECISION)" if pg else repr(_MAX)
    return f"({column} >= -{bound} AND {column} <= {bound})"


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _float(value: Any) -> float:
    return 0.0 if value is None else float(value)
