"""Two runs of one store paired in SQL by example id: what a comparison's decision needs.

A comparison reads, per paired example, each side's promotion score (the weighted score with
each criterion's adjusted value: the ``promotion_score`` column), pass flag and scores. For two
runs in one store whose samples are all in the typed columns of schema version 8, the database
pairs them on the primary key and sums: the pass table Tango's test reads, the sums of the
promotion scores and of their differences (and squares) as the policy's arrays hold them, the
same per scorer, and the ids of the regressions and improvements to list (only those are then
decoded). :meth:`PairSumsReader.pair_sums` returns ``None`` when the pairing cannot be exact in
SQL (see there); the caller then pairs the runs as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aieval.core import ROW_CHECK_PREFIX
from aieval.store._run_sums import SumsReader

__all__ = ["DeltaSums", "PairSums", "PairSumsReader", "PassTable"]

#: the largest finite double: a value is finite when its magnitude is at most this (NULL, NaN
#: and the infinities are not), as ``aieval._numbers.finite`` reads it
_MAX = 1.7976931348623157e308


@dataclass(frozen=True, slots=True)
class PassTable:
    """The paired examples' pass flags: both passed, the baseline only, the candidate only,
    neither (McNemar's/Tango's table)."""

    both: int
    baseline_only: int
    candidate_only: int
    neither: int


@dataclass(frozen=True, slots=True)
class DeltaSums:
    """Paired values ``b`` (baseline) and ``c`` (candidate): their count, sums and sums of
    squares, and those of the differences ``c - b``. Sums add in the database's order: equal to
    numpy's on the same pairs within a relative 1e-12."""

    n: int
    baseline: float
    baseline_squares: float
    candidate: float
    candidate_squares: float
    delta: float
    delta_squares: float

    @property
    def mean_delta(self) -> float | None:
        """The mean difference (``None`` without pairs)."""
        return self.delta / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class PairSums:
    """Two runs paired by example id (see the module docstring).

    Attributes:
        paired: examples both runs have; ``only_baseline``/``only_candidate`` the others.
        passes: the paired examples' pass table.
        promotion: over the paired examples the baseline scored (``baseline_scored``), its
            promotion score and the candidate's, 0 where the candidate left it unscored
            (``unscored``: no score, or a scorer the baseline has without a value), as the
            policy's ``baseline_scores``/``candidate_scores`` hold the paired part.
        baseline_only: the promotion scores of the examples only the baseline has and scored
            (the candidate's are 0 there): ``(n, sum, sum of squares)``.
        candidate_scored: paired examples the candidate has a promotion score for.
        graded_pairs: paired examples graded (not plain) on either side, whose gates and
            criteria the policy reads from their records.
        scorers: per scorer both runs have, the pairs where both values are finite.
        regressions, improvements: the listed changes' ids (up to the limit asked), ordered as
            the comparison lists them; ``regressions_count``/``improvements_count`` all of them.
    """

    paired: int
    only_baseline: int
    only_candidate: int
    passes: PassTable
    baseline_scored: int
    unscored: int
    candidate_scored: int
    graded_pairs: int
    promotion: DeltaSums
    baseline_only: tuple[int, float, float]
    scorers: dict[str, DeltaSums]
    regressions: tuple[str, ...]
    improvements: tuple[str, ...]
    regressions_count: int
    improvements_count: int


class PairSumsReader(SumsReader):
    """Two runs of this store paired in SQL (see the module docstring)."""

    def pair_sums(
        self,
        baseline: str,
        candidate: str,
        *,
        example_delta: float = 0.0,
        limit: int | None = None,
    ) -> PairSums | None:
        """The sums of ``baseline`` and ``candidate`` (run ids of this store) paired by example.

        ``None`` when the pairing cannot be exact in SQL: a sample of either run stored before
        schema version 8, a run of epochs (its examples are means over their answers), a
        scorer the candidate adds (its weighted score is recomputed without it) or a row's own
        check (``row:`` scorer) one side of a pair has and the other lacks (that pair's weighted
        scores are recomputed without it). Two runs in two stores cannot be
        paired in SQL at all: call this on one store only with both runs in it; the caller
        pairs the others as before.

        Args:
            example_delta: the policy's ``example_delta``: a paired weighted score down (up) by
                at least this lists the example as a regression (improvement), as a pass flag
                that flips does.
            limit: list at most this many of each (``None``: all).
        """
        facts = self._run_facts(baseline), self._run_facts(candidate)
        if facts[0] is None or facts[1] is None:
            return None
        names_b, names_c = self._scorer_names(baseline), self._scorer_names(candidate)
        if not names_c <= names_b:
            return None
        rows = any(n.startswith(ROW_CHECK_PREFIX) for n in names_b | names_c)
        if rows and (self._uneven(baseline, candidate) or self._uneven(candidate, baseline)):
            return None
        main, scorers = self._pairs(baseline, candidate, example_delta)
        paired = _int(main[0])
        # the unpaired examples counted from the runs' sizes; the baseline's own summed only
        # when there are some (two runs of one dataset have none: no third pass)
        only_b = (
            self._read_one(
                "SELECT COUNT(*), COUNT(b.promotion_score), SUM(b.promotion_score),"
                " SUM(b.promotion_score * b.promotion_score) FROM samples b WHERE b.run_id = ?"
                " AND NOT EXISTS (SELECT 1 FROM samples c WHERE c.run_id = ?"
                " AND c.sample_id = b.sample_id)",
                (baseline, candidate),
            )
            if facts[0] > paired
            else (0, 0, None, None)
        )
        assert only_b is not None
        regressions, improvements = self._changes(baseline, candidate, example_delta, limit)
        return PairSums(
            paired=paired,
            only_baseline=facts[0] - paired,
            only_candidate=facts[1] - paired,
            passes=PassTable(*(_int(v) for v in main[1:5])),
            baseline_scored=_int(main[5]),
            unscored=_int(main[6]),
            candidate_scored=_int(main[7]),
            graded_pairs=_int(main[8]),
            promotion=_delta_sums(main[5], main[9:15]),
            baseline_only=(_int(only_b[1]), _float(only_b[2]), _float(only_b[3])),
            scorers=scorers,
            regressions=regressions,
            improvements=improvements,
            regressions_count=_int(main[15]),
            improvements_count=_int(main[16]),
        )

    def _run_facts(self, run_id: str) -> int | None:
        """The run's number of samples; ``None`` when a sample is not in the typed columns
        (:meth:`sums_ready`) or the run has epochs (paired by example, not sample)."""
        row = self._read_one(
            "SELECT COUNT(*), SUM(CASE WHEN verdict_values IS NULL OR verdict_passed IS NULL"
            " OR verdict_plain IS NULL THEN 1 ELSE 0 END), COUNT(epoch)"
            " FROM samples WHERE run_id = ?",
            (run_id,),
        )
        if row is None or _int(row[1]) or _int(row[2]):
            return None
        return _int(row[0])

    def _scorer_names(self, run_id: str) -> set[str]:
        """The run's scorers."""
        return {
            str(r[0])
            for r in self._read(
                "SELECT scorer FROM scores WHERE run_id = ? GROUP BY scorer", (run_id,)
            )
        }

    def _uneven(self, run_id: str, other: str) -> bool:
        """Whether a paired example (neither target failed) has a row's own check in ``run_id``
        that ``other`` lacks: the comparison recomputes its weighted score without it."""
        row = self._read_one(
            "SELECT 1 FROM scores x JOIN samples s ON s.run_id = x.run_id"
            " AND s.sample_id = x.sample_id JOIN samples o ON o.run_id = ?"
            " AND o.sample_id = x.sample_id WHERE x.run_id = ? AND substr(x.scorer, 1, ?) = ?"
            " AND s.error IS NULL AND o.error IS NULL AND NOT EXISTS (SELECT 1 FROM scores y"
            " WHERE y.run_id = o.run_id AND y.sample_id = x.sample_id AND y.scorer = x.scorer)"
            " LIMIT 1",
            (other, run_id, len(ROW_CHECK_PREFIX), ROW_CHECK_PREFIX),
        )
        return row is not None

    def _finite(self, column: str) -> str:
        bound = f"CAST({_MAX!r} AS DOUBLE PRECISION)" if self._pg else repr(_MAX)
        return f"({column} >= -{bound} AND {column} <= {bound})"

    @property
    def _pg(self) -> bool:
        return self.location.backend == "postgres"

    def _paired(
        self, baseline: str, candidate: str, example_delta: float, *, scores: bool = False
    ) -> tuple[str, list[Any]]:
        """The paired examples as a derived table: each side's pass flag (``bp``, ``cp``),
        whether the baseline scored it (``bk``), the candidate's value as the policy counts it
        (``cv``), the weighted scores' change as the listing counts it (``flip``, ``known``,
        ``d``), and whether it is listed as worse (``worse``) or better (``better``); with
        ``scores``, whether the candidate left it unscored (``un``; else 0)."""
        # the baseline's examples with a finite score of a scorer the candidate's same example
        # has no finite value of (``unscored_pair``): table ``l`` of :meth:`_pairs`
        lacking = " LEFT JOIN l ON l.sample_id = b.sample_id" if scores else ""
        unscored = (
            "CASE WHEN b.promotion_score IS NULL THEN 0 WHEN c.promotion_score IS NULL THEN 1"
            " WHEN c.error IS NOT NULL THEN 0 WHEN l.sample_id IS NOT NULL THEN 1 ELSE 0 END"
            if scores
            else "0"
        )
        known = "(b.weighted_score IS NOT NULL AND c.weighted_score IS NOT NULL)"
        delta = "(c.weighted_score - b.weighted_score)"
        flip = "(c.verdict_passed - b.verdict_passed)"
        # grades down (up) a step or more: the letters' ranks apart, when both have one
        steps = (
            "CASE WHEN b.grade IS NULL OR c.grade IS NULL THEN 0"
            f" ELSE {_rank('b.grade')} - {_rank('c.grade')} END"
        )
        worse = f"({flip} < 0 OR {steps} < 0 OR ({known} AND {delta} <= ?))"
        better = f"({flip} > 0 OR {steps} > 0 OR ({known} AND {delta} >= ?))"
        sql = (
            "SELECT b.sample_id AS id, b.idx AS idx, b.verdict_passed AS bp,"
            " c.verdict_passed AS cp, b.promotion_score AS bv,"
            f" CASE WHEN b.promotion_score IS NULL THEN 0 ELSE 1 END AS bk, {unscored} AS un,"
            " c.promotion_score AS cps,"
            " CASE WHEN b.verdict_plain = 0 OR c.verdict_plain = 0 THEN 1 ELSE 0 END AS graded,"
            f" {flip} AS flip, {steps} AS steps, CASE WHEN {known} THEN {delta} ELSE 0 END AS k,"
            f" CASE WHEN {worse} THEN 1 ELSE 0 END AS worse,"
            f" CASE WHEN {better} AND NOT {worse} THEN 1 ELSE 0 END AS better"
            " FROM samples b JOIN samples c ON c.run_id = ? AND c.sample_id = b.sample_id"
            f"{lacking} WHERE b.run_id = ?"
        )
        args = [-example_delta, example_delta, -example_delta, candidate, baseline]
        return sql, args

    def _pairs(
        self, baseline: str, candidate: str, example_delta: float
    ) -> tuple[tuple[Any, ...], dict[str, DeltaSums]]:
        """The pairs' sums and, per scorer, its finite pairs' sums: one statement, the two
        runs' scores joined once (``j``) for both the unscored pairs and the scorers' sums."""
        sql, args = self._paired(baseline, candidate, example_delta, scores=True)
        bf, cf = self._finite("j.bv"), self._finite("j.cv")
        # the candidate's value beside each example the baseline scored (0: left unscored)
        cv = "CASE WHEN bk = 0 THEN NULL WHEN un = 1 THEN 0.0 ELSE cps END"
        # materialized: each pair's values are computed once, not per use; the scorers' rows
        # follow the pairs' one (its name NULL), padded to its width
        pad = ", NULL" * 10
        rows = self._read(
            "WITH j AS MATERIALIZED (SELECT bs.sample_id AS id, bs.scorer AS scorer,"
            " bs.value AS bv, cs.value AS cv FROM scores bs LEFT JOIN scores cs"
            " ON cs.run_id = ? AND cs.sample_id = bs.sample_id AND cs.scorer = bs.scorer"
            " WHERE bs.run_id = ?),"
            f" l AS (SELECT id AS sample_id FROM j WHERE {bf} AND NOT COALESCE({cf}, FALSE)"
            " GROUP BY id),"
            f" p AS MATERIALIZED ({sql}), q AS MATERIALIZED (SELECT *, {cv} AS cv FROM p)"
            " SELECT NULL AS name, COUNT(*), SUM(bp * cp), SUM(bp * (1 - cp)),"
            " SUM((1 - bp) * cp), SUM((1 - bp) * (1 - cp)), SUM(bk), SUM(bk * un), COUNT(cps),"
            " SUM(graded), SUM(bv), SUM(bv * bv), SUM(cv), SUM(cv * cv), SUM(cv - bv),"
            " SUM((cv - bv) * (cv - bv)), SUM(worse), SUM(better) FROM q"
            " UNION ALL SELECT j.scorer, COUNT(*), SUM(j.bv), SUM(j.bv * j.bv), SUM(j.cv),"
            " SUM(j.cv * j.cv), SUM(j.cv - j.bv), SUM((j.cv - j.bv) * (j.cv - j.bv))"
            f"{pad} FROM j WHERE {bf} AND {cf} GROUP BY j.scorer",
            [candidate, baseline, *args],
        )
        main = next(row[1:] for row in rows if row[0] is None)
        scorers = {
            str(r[0]): _delta_sums(r[1], r[2:8])
            for r in sorted((r for r in rows if r[0] is not None), key=lambda r: str(r[0]))
        }
        return main, scorers

    def _changes(
        self, baseline: str, candidate: str, example_delta: float, limit: int | None
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The regressions and the improvements to list, from one pass over the pairs."""
        sql, args = self._paired(baseline, candidate, example_delta)
        # as the comparison orders them: the flips first, then the grade steps, then the
        # largest change, then the baseline's dataset order; the improvements by the same
        # keys negated (exact: a sign is flipped), so both are numbered in one window
        s = "(CASE WHEN worse = 1 THEN 1 ELSE -1 END)"
        order = f"{s} * flip, {s} * steps, {s} * k, idx, id"
        cap = "" if limit is None else f" WHERE n <= {int(limit)}"
        rows = self._read(
            f"SELECT id, worse FROM (SELECT id, worse, idx, ROW_NUMBER() OVER (PARTITION BY"
            f" worse ORDER BY {order}) AS n FROM ({sql}) p WHERE worse = 1 OR better = 1) q"
            f"{cap} ORDER BY worse, n",
            args,
        )
        return (
            tuple(str(r[0]) for r in rows if _int(r[1]) == 1),
            tuple(str(r[0]) for r in rows if _int(r[1]) == 0),
        )


def _rank(grade: str) -> str:
    """A letter grade's rank (A 0 ... F 4; another letter 0), as the comparison ranks it."""
    ranks = " ".join(f"WHEN '{g}' THEN {r}" for r, g in enumerate("ABCDF"))
    return f"CASE {grade} {ranks} ELSE 0 END"


def _delta_sums(n: Any, sums: Sequence[Any]) -> DeltaSums:
    return DeltaSums(_int(n), *(_float(v) for v in sums))


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _float(value: Any) -> float:
    return 0.0 if value is None else float(value)
