"""Two runs of one store paired in SQL by example id: what a comparison's decision needs.

A comparison reads, per paired example, each side's promotion score (the weighted score with
each criterion's adjusted value: the ``promotion_score`` column), pass flag and scores. For two
runs in one store whose samples are all in the typed columns of schema version 8, the database
pairs them on the primary key and sums: the pass table Tango's test reads, the sums of the
promotion scores and of their differences (and squares) as the policy's arrays hold them, the
same per scorer, and the ids of the regressions and improvements to list (only those are then
decoded). :meth:`PairSumsReader.pair_sums` returns ``None`` when the pairing cannot be exact in
SQL (see there); the caller then pairs the runs as before.

Three statements in the common case, each one pass over its join: the scorers' (both runs'
scores of each paired example, and the candidate's scorers), the samples' (the baseline's
samples beside the candidate's, with both runs' sizes, so the pairs and the unpaired counts are
of one state of the runs), the listing's. A derived table whose columns several sums read is
fenced on SQLite (:attr:`PairSumsReader._fence`) so each column is computed once per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aieval.core import ROW_CHECK_PREFIX
from aieval.store._run_sums import SumsReader

__all__ = [
    "BinaryTable",
    "DeltaSums",
    "PairStanding",
    "PairSums",
    "PairSumsReader",
    "PassTable",
    "ScorerDetails",
]

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
class PairStanding:
    """One side over the paired examples, for the tie-break: its weighted scores' count and
    sum, its latencies' count, its costs' sum and count, and whether any is unpriced (tokens
    or a model call without a cost)."""

    scored: int
    total: float
    latencies: int
    cost: float
    costed: int
    unpriced: bool


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
        weighted: the weighted scores over the pairs where both are known;
            ``weighted_table`` their 0/100 table.
        promotion_table: the 0/100 table of the decision's arrays (the examples the baseline
            scored, paired or not, the candidate's 0 where it lacks or left one unscored).
        scorer_details: per scorer of the baseline's paired examples, its missing counts, 0/1
            table and where the record path first meets it.
        standing: the baseline's and the candidate's standing over the pairs (tie-break).
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
    weighted: DeltaSums
    weighted_table: BinaryTable
    promotion_table: BinaryTable
    scorer_details: dict[str, ScorerDetails]
    standing: tuple[PairStanding, PairStanding]


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
        scorer the candidate adds (its weighted score is recomputed without it), a row's own
        check (``row:`` scorer) one side of a pair has and the other lacks (that pair's weighted
        scores are recomputed without it), or a candidate's score of a paired example the
        baseline has no row of (where it is first met is then not known). Two runs in two
        stores cannot be paired in SQL at all: call this on one store only with both runs in
        it; the caller pairs the others as before.

        Args:
            example_delta: the policy's ``example_delta``: a paired weighted score down (up) by
                at least this lists the example as a regression (improvement), as a pass flag
                that flips does.
            limit: list at most this many of each (``None``: all).
        """
        found = self._pair_scorers(baseline, candidate)
        scorers = [r[1:] for r in found if _int(r[0]) == 0]
        # the candidate's scorers: each one's finite values and rows
        cand = {str(r[1]): (_int(r[2]), _int(r[3])) for r in found if _int(r[0]) == 1}
        lacking = any(_int(s[8]) for s in scorers)
        main = self._pairs(baseline, candidate, example_delta, lacking=lacking)
        size_b, paired, size_c = _int(main[0]), _int(main[3]), _int(main[4])
        if _int(main[1]) or _int(main[2]) or _int(main[5]) or _int(main[6]):
            return None  # a row before version 8, or epochs: not exact in SQL
        names_b = {str(s[0]) for s in scorers} if size_b == paired else self._scorer_names(baseline)
        if not set(cand) <= names_b:
            return None
        if sum(rows_c for _, rows_c in cand.values()) != sum(_int(s[14]) for s in scorers):
            # rows the baseline's scores do not reach: the candidate's own examples' (kept
            # apart), or a paired example's the baseline has no row of (declined below)
            cand = self._candidate_paired(candidate, baseline)
        rows = any(n.startswith(ROW_CHECK_PREFIX) for n in names_b | set(cand))
        if rows and (self._uneven(baseline, candidate) or self._uneven(candidate, baseline)):
            return None
        details: dict[str, ScorerDetails] = {}
        sums: dict[str, DeltaSums] = {}
        for s in sorted(scorers, key=lambda r: str(r[0])):
            name = str(s[0])
            finite_c, rows_c = cand.get(name, (0, 0))
            if rows_c != _int(s[14]):
                return None  # a candidate's score without the baseline's row: not exact here
            first = (_int(s[12]), 0, _int(s[13]))
            if rows_c:
                first = min(first, (_int(s[15]), 1, _int(s[16])))
            details[name] = ScorerDetails(
                candidate_missing=_int(s[8]),
                baseline_missing=finite_c - _int(s[1]),
                table=BinaryTable(not _int(s[9]), _int(s[10]), _int(s[11])),
                first=first,
            )
            if _int(s[1]):
                sums[name] = _delta_sums(s[1], s[2:8])
        if any(rows_c and name not in details for name, (_, rows_c) in cand.items()):
            return None  # the same: a candidate's scorer without the baseline's rows
        regressions, improvements = self._changes(baseline, candidate, example_delta, limit)
        only_b = size_b - paired
        return PairSums(
            paired=paired,
            only_baseline=only_b,
            only_candidate=size_c - paired,
            passes=PassTable(*(_int(v) for v in main[7:11])),
            baseline_scored=_int(main[11]),
            unscored=_int(main[12]),
            candidate_scored=_int(main[13]),
            graded_pairs=_int(main[14]),
            promotion=_delta_sums(main[11], main[15:21]),
            baseline_only=(_int(main[23]), _float(main[24]), _float(main[25])),
            scorers=sums,
            regressions=regressions,
            improvements=improvements,
            regressions_count=_int(main[21]),
            improvements_count=_int(main[22]),
            weighted=_delta_sums(main[26], main[27:33]),
            weighted_table=_binary(main[33:36]),
            promotion_table=_binary(main[36:39]),
            scorer_details=details,
            standing=(_standing(main[39:45]), _standing(main[45:51])),
        )

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

    @property
    def _fence(self) -> str:
        """Ends a derived table so that SQLite computes its columns once per row instead of
        repeating each expression where the outer query uses it (a subquery with a LIMIT is
        not flattened into an aggregate); PostgreSQL computes them once anyway."""
        return "" if self._pg else " LIMIT -1"

    def _paired(self, baseline: str, candidate: str, example_delta: float) -> tuple[str, list[Any]]:
        """The paired examples as a derived table: the change as the listing orders it
        (``flip``, ``steps``, ``k``) and whether it is listed as worse (``worse``) or better
        (``better``)."""
        known, delta, flip, steps, worse, better = _change_terms()
        sql = (
            "SELECT b.sample_id AS id, b.idx AS idx,"
            f" {flip} AS flip, {steps} AS steps, CASE WHEN {known} THEN {delta} ELSE 0 END AS k,"
            f" CASE WHEN {worse} THEN 1 ELSE 0 END AS worse,"
            f" CASE WHEN {better} AND NOT {worse} THEN 1 ELSE 0 END AS better"
            " FROM samples b JOIN samples c ON c.run_id = ? AND c.sample_id = b.sample_id"
            " WHERE b.run_id = ?"
        )
        args = [-example_delta, example_delta, -example_delta, candidate, baseline]
        return sql, args

    def _pairs(
        self, baseline: str, candidate: str, example_delta: float, *, lacking: bool
    ) -> tuple[Any, ...]:
        """Everything summed over the baseline's samples beside the candidate's same example,
        in one pass of one statement (so the sizes, the pairs and the unpaired counts are of one
        state of both runs): each run's size, readiness and epochs; the pairs' pass table,
        promotion scores as the policy counts them, changes, weighted scores, 0/100 tables and
        each side's standing; the baseline-only examples' promotion scores. With ``lacking``
        (some paired score the candidate left without a value), each pair is looked up for one
        (``unscored_pair``)."""
        bf, cf = self._finite("bs.value"), self._finite("cs.value")
        lacks = (
            "EXISTS (SELECT 1 FROM scores bs LEFT JOIN scores cs ON cs.run_id = c.run_id"
            " AND cs.sample_id = bs.sample_id AND cs.scorer = bs.scorer"
            " WHERE bs.run_id = b.run_id AND bs.sample_id = b.sample_id"
            f" AND {bf} AND NOT COALESCE({cf}, FALSE))"
            if lacking
            else "FALSE"
        )
        known, _, _, _, worse, better = _change_terms()
        ready = "(s.verdict_values IS NULL OR s.verdict_passed IS NULL OR s.verdict_plain IS NULL)"
        unpriced = (
            "CASE WHEN s.cost IS NULL AND (s.input_tokens IS NOT NULL OR s.output_tokens IS NOT"
            " NULL OR EXISTS (SELECT 1 FROM model_calls m WHERE m.run_id = s.run_id"
            " AND m.sample_id = s.sample_id AND m.error IS NULL)) THEN 1 ELSE 0 END"
        )
        # p: one row per baseline sample, its pair's columns NULL when the candidate lacks it
        pairs = (
            "SELECT CASE WHEN c.run_id IS NULL THEN 0 ELSE 1 END AS pr,"
            f" CASE WHEN {ready.replace('s.', 'b.')} THEN 1 ELSE 0 END AS nb,"
            " b.epoch AS be, b.verdict_passed AS bp, c.verdict_passed AS cp,"
            " b.promotion_score AS bv, c.promotion_score AS cps,"
            " CASE WHEN c.run_id IS NULL OR b.promotion_score IS NULL THEN 0"
            " WHEN c.promotion_score IS NULL THEN 1 WHEN c.error IS NOT NULL THEN 0"
            f" WHEN {lacks} THEN 1 ELSE 0 END AS un,"
            " CASE WHEN b.verdict_plain = 0 OR c.verdict_plain = 0 THEN 1 ELSE 0 END AS graded,"
            f" CASE WHEN {worse} THEN 1 ELSE 0 END AS worse,"
            f" CASE WHEN {better} AND NOT {worse} THEN 1 ELSE 0 END AS better,"
            f" CASE WHEN {known} THEN b.weighted_score END AS wb,"
            f" CASE WHEN {known} THEN c.weighted_score END AS wc,"
            " CASE WHEN c.run_id IS NULL THEN NULL ELSE b.weighted_score END AS sw,"
            " CASE WHEN c.run_id IS NULL THEN NULL ELSE b.latency_s END AS sl,"
            " CASE WHEN c.run_id IS NULL THEN NULL ELSE b.cost END AS sc,"
            f" CASE WHEN c.run_id IS NULL THEN 0 ELSE {unpriced.replace('s.', 'b.')} END AS su,"
            " c.weighted_score AS tw, c.latency_s AS tl, c.cost AS tc,"
            f" CASE WHEN c.run_id IS NULL THEN 0 ELSE {unpriced.replace('s.', 'c.')} END AS tu"
            " FROM samples b LEFT JOIN samples c ON c.run_id = ? AND c.sample_id = b.sample_id"
            f" WHERE b.run_id = ?{self._fence}"
        )
        # the candidate's value beside each example the baseline scored, as the decision's
        # arrays hold it (0: left unscored, or the example is the baseline's only)
        cv = "CASE WHEN bv IS NULL THEN NULL WHEN pr = 0 OR un = 1 THEN 0.0 ELSE cps END"
        q = (
            f"SELECT *, CASE WHEN pr = 1 THEN bv END AS pb, CASE WHEN pr = 1 THEN {cv} END AS pc,"
            f" {cv} AS tv, CASE WHEN pr = 0 THEN bv END AS ob FROM ({pairs}) p"
        )
        facts = (
            "SELECT COUNT(*) AS fn, SUM(CASE WHEN {ready} THEN 1 ELSE 0 END) AS fbad,"
            " COUNT(s.epoch) AS fep FROM samples s WHERE s.run_id = ?"
        ).replace("{ready}", ready)
        sql = (
            f"WITH f AS ({facts}) SELECT COUNT(*), SUM(nb), COUNT(be), SUM(pr), MAX(f.fn),"
            " MAX(f.fbad), MAX(f.fep),"
            " SUM(bp * cp), SUM(bp * (1 - cp)), SUM((1 - bp) * cp), SUM((1 - bp) * (1 - cp)),"
            " COUNT(pb), SUM(un), COUNT(cps), SUM(graded * pr),"
            " SUM(pb), SUM(pb * pb), SUM(pc), SUM(pc * pc), SUM(pc - pb),"
            " SUM((pc - pb) * (pc - pb)), SUM(worse), SUM(better),"
            " COUNT(ob), SUM(ob), SUM(ob * ob),"
            " COUNT(wb), SUM(wb), SUM(wb * wb), SUM(wc), SUM(wc * wc), SUM(wc - wb),"
            " SUM((wc - wb) * (wc - wb)),"
            f" {_table('wb', 'wc', 'wb IS NOT NULL')},"
            f" {_table('bv', 'tv', 'bv IS NOT NULL')},"
            " COUNT(sw), SUM(sw), COUNT(sl), SUM(sc), COUNT(sc), MAX(su),"
            " COUNT(tw), SUM(tw), COUNT(tl), SUM(tc), COUNT(tc), MAX(tu)"
            f" FROM ({q}) q CROSS JOIN f"
        )
        row = self._read_one(
            sql, (candidate, -example_delta, example_delta, -example_delta, candidate, baseline)
        )
        assert row is not None
        return row

    def _pair_scorers(self, baseline: str, candidate: str) -> list[tuple[Any, ...]]:
        """Per scorer of the baseline's paired examples, one pass over both runs' scores
        (each paired example's, the candidate's looked up beside the baseline's): the pairs
        where both values are finite, their sums; the pairs only the baseline has a finite
        value of; the values not 0 or 1 and the 0/1 table; where it is first met (the least
        dataset position, then score row, on each side) and how many of the candidate's rows
        there are (each row tagged 0). Then (tagged 1) per scorer of the candidate, its finite
        values and rows (:meth:`_candidate_paired` keeps those on the paired examples)."""
        bf, cf = self._finite("bs.value"), self._finite("cs.value")
        # each row's values computed once (x, y: the pair's values when both are finite; m:
        # the baseline's only), then summed per scorer
        rows = (
            "SELECT bs.scorer AS scorer, b.idx AS idx, bs.rowid AS brow, cs.rowid AS crow,"
            f" CASE WHEN {bf} AND {cf} THEN bs.value END AS x,"
            f" CASE WHEN {bf} AND {cf} THEN cs.value END AS y,"
            f" CASE WHEN {bf} AND NOT COALESCE({cf}, FALSE) THEN 1 ELSE 0 END AS m"
            " FROM samples b JOIN samples c ON c.run_id = ? AND c.sample_id = b.sample_id"
            " JOIN scores bs ON bs.run_id = b.run_id AND bs.sample_id = b.sample_id"
            " LEFT JOIN scores cs ON cs.run_id = c.run_id AND cs.sample_id = b.sample_id"
            f" AND cs.scorer = bs.scorer WHERE b.run_id = ?{self._fence}"
        )
        cf_x = self._finite("x.value")
        theirs = (
            f"SELECT x.scorer AS scorer, CASE WHEN {cf_x} THEN 1 ELSE 0 END AS fc FROM scores x"
        )
        pad = ", NULL" * 14
        # one statement, so the candidate's rows are counted in the state the pairs are read
        return self._read(
            "SELECT 0, scorer, COUNT(x), SUM(x), SUM(x * x), SUM(y), SUM(y * y), SUM(y - x),"
            " SUM((y - x) * (y - x)), SUM(m),"
            " SUM(CASE WHEN x IS NULL OR (x IN (0, 1) AND y IN (0, 1)) THEN 0 ELSE 1 END),"
            " SUM(CASE WHEN y = 1 AND x = 0 THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN x = 1 AND y = 0 THEN 1 ELSE 0 END),"
            " MIN(idx), MIN(brow), COUNT(crow), MIN(CASE WHEN crow IS NOT NULL THEN idx END),"
            f" MIN(crow) FROM ({rows}) j GROUP BY scorer"
            f" UNION ALL SELECT 1, scorer, SUM(fc), COUNT(*){pad} FROM ({theirs}"
            f" WHERE x.run_id = ?{self._fence}) t GROUP BY scorer",
            (candidate, baseline, candidate),
        )

    def _candidate_paired(self, candidate: str, baseline: str) -> dict[str, tuple[int, int]]:
        """Per scorer of the candidate, its finite values and rows on the examples the baseline
        has too (asked only when it has others)."""
        cf = self._finite("x.value")
        rows = self._read(
            f"SELECT scorer, SUM(CASE WHEN {cf} THEN 1 ELSE 0 END), COUNT(*) FROM scores x"
            " WHERE x.run_id = ? AND EXISTS (SELECT 1 FROM samples b WHERE b.run_id = ?"
            " AND b.sample_id = x.sample_id) GROUP BY scorer",
            (candidate, baseline),
        )
        return {str(r[0]): (_int(r[1]), _int(r[2])) for r in rows}

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


def _change_terms() -> tuple[str, str, str, str, str, str]:
    """A pair's change as the comparison lists it (baseline ``b``, candidate ``c``): whether
    both weighted scores are known, their difference, the pass flag's flip, the grade's steps
    (the letters' ranks apart, when both have one), and whether it is worse (better): a flip
    or a step down (up), or the weighted score down (up) by the first (second) ``?``."""
    known = "(b.weighted_score IS NOT NULL AND c.weighted_score IS NOT NULL)"
    delta = "(c.weighted_score - b.weighted_score)"
    flip = "(c.verdict_passed - b.verdict_passed)"
    steps = (
        "CASE WHEN b.grade IS NULL OR c.grade IS NULL THEN 0"
        f" ELSE {_rank('b.grade')} - {_rank('c.grade')} END"
    )
    worse = f"({flip} < 0 OR {steps} < 0 OR ({known} AND {delta} <= ?))"
    better = f"({flip} > 0 OR {steps} > 0 OR ({known} AND {delta} >= ?))"
    return known, delta, flip, steps, worse, better


def _rank(grade: str) -> str:
    """A letter grade's rank (A 0 ... F 4; another letter 0), as the comparison ranks it."""
    ranks = " ".join(f"WHEN '{g}' THEN {r}" for r, g in enumerate("ABCDF"))
    return f"CASE {grade} {ranks} ELSE 0 END"


def _delta_sums(n: Any, sums: Sequence[Any]) -> DeltaSums:
    return DeltaSums(_int(n), *(_float(v) for v in sums))


def _table(b: str, c: str, gate: str) -> str:
    """Over the rows where ``gate`` holds, three sums: values not 0 or 100 on either side
    (``c`` NULL counts 0), the pairs where only ``c`` is 100, those where only ``b`` is."""
    cz = f"COALESCE({c}, 0.0)"
    return (
        f"SUM(CASE WHEN NOT ({gate}) THEN 0 WHEN {b} IN (0, 100.0) AND {cz} IN (0, 100.0)"
        f" THEN 0 ELSE 1 END), SUM(CASE WHEN ({gate}) AND {cz} = 100.0 AND {b} = 0 THEN 1"
        f" ELSE 0 END), SUM(CASE WHEN ({gate}) AND {b} = 100.0 AND {cz} = 0 THEN 1 ELSE 0 END)"
    )


def _binary(row: Sequence[Any]) -> BinaryTable:
    return BinaryTable(not _int(row[0]), _int(row[1]), _int(row[2]))


def _standing(row: Sequence[Any]) -> PairStanding:
    return PairStanding(
        _int(row[0]), _float(row[1]), _int(row[2]), _float(row[3]), _int(row[4]), bool(_int(row[5]))
    )


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _float(value: Any) -> float:
    return 0.0 if value is None else float(value)
